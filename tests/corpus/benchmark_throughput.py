"""Measure training / inference throughput and peak memory of a model on synthetic data.

Timing CUDA work needs explicit synchronization around the timed region, which is
what most of the synchronize() calls below are for.

    python benchmark_throughput.py --batch-size 128 --steps 50 --warmup 10
"""
import argparse
import json
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def build_model(width=512, depth=8, num_classes=1000):
    layers = [nn.Conv2d(3, width // 4, 4, 4), nn.GELU()]
    for _ in range(depth):
        layers += [nn.Conv2d(width // 4, width // 4, 3, padding=1, groups=width // 4), nn.GELU(),
                   nn.Conv2d(width // 4, width // 4, 1), nn.GELU()]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width // 4, num_classes)]
    return nn.Sequential(*layers)


def bench_train(model, loader, optimizer, device, steps, warmup):
    model.train()
    times = []
    step = 0
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        torch.cuda.synchronize()  # trap: GPU105
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()  # trap: GPU105
        dt = time.perf_counter() - t0
        if step >= warmup:
            times.append(dt)
        step += 1
        if step == warmup + steps:
            break
    final_loss = loss.item()  # trap: GPU101
    return times, final_loss


def bench_train_events(model, loader, optimizer, device, steps):
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    ms = []
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)  # expect: GPU203
        start_evt.record()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        end_evt.record()
        end_evt.synchronize()  # trap: GPU105
        ms.append(start_evt.elapsed_time(end_evt))
        if i + 1 == steps:
            break
    return ms


def peak_memory_probe(model, loader, optimizer, device, steps):
    torch.cuda.reset_peak_memory_stats(device)
    peaks = []
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)  # expect: GPU203
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()  # expect: GPU105
        peaks.append(torch.cuda.max_memory_allocated(device) / 2**20)
        if i + 1 == steps:
            break
    return max(peaks)


@torch.inference_mode()
def bench_infer(model, x, iters, warmup):
    model.eval()
    for _ in range(warmup):
        with torch.autocast("cuda", dtype=torch.float16):  # trap: GPU301
            model(x)
    torch.cuda.synchronize()  # trap: GPU105
    t0 = time.perf_counter()
    for _ in range(iters):
        with torch.autocast("cuda", dtype=torch.float16):  # trap: GPU301
            out = model(x)
    torch.cuda.synchronize()  # trap: GPU105
    elapsed = time.perf_counter() - t0
    checksum = out.float().sum().item()  # trap: GPU101
    return iters * x.size(0) / elapsed, checksum


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--json", default="")
    args = p.parse_args()

    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    n = args.batch_size * (args.steps + args.warmup)
    data = TensorDataset(torch.randn(n, 3, 224, 224), torch.randint(0, 1000, (n,)))
    loader_kwargs = dict(batch_size=args.batch_size, num_workers=args.workers, pin_memory=True, drop_last=True)
    loader = DataLoader(data, shuffle=True, **loader_kwargs)  # trap: GPU201

    model = build_model().to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    times, final_loss = bench_train(model, loader, optimizer, device, args.steps, args.warmup)
    event_ms = bench_train_events(model, loader, optimizer, device, args.steps)
    peak_mib = peak_memory_probe(model, loader, optimizer, device, steps=5)
    x = torch.randn(args.batch_size, 3, 224, 224, device=device)
    infer_ips, checksum = bench_infer(model, x, iters=args.steps, warmup=args.warmup)

    times_ms = np.asarray(times) * 1000.0
    results = {
        "train_img_per_s": args.batch_size / statistics.median(times),
        "train_step_ms_p50": np.percentile(times_ms, 50).item(),  # trap: GPU101
        "train_step_ms_p90": float(np.percentile(times_ms, 90)),  # trap: GPU101
        "event_step_ms_mean": float(np.mean(event_ms)),
        "infer_img_per_s": infer_ips,
        "peak_mem_mib": peak_mib,
        "final_loss": final_loss,
        "checksum": checksum,
        "step_ms": times_ms.round(2).tolist(),  # trap: GPU103
    }
    for key, value in results.items():  # trap: GPU101
        if key != "step_ms":
            print(f"{key:>22}: {value:.3f}")  # trap: GPU102
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
