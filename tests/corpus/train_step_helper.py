"""Keyword-spotting model on log-mel features; the per-batch work lives in train_step().

The loss scaler comes from the project's shared utilities (train_utils.make_loss_scaler),
so this module only ever sees it as the `scaler` argument.

    torchrun --nproc_per_node=2 train_step_helper.py --epochs 30
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data as tud
from torch.nn.parallel import DistributedDataParallel

from train_utils import make_loss_scaler


class SpeechFeatures(tud.Dataset):
    def __init__(self, n, n_mels=64, frames=101, num_classes=35):
        self.n, self.n_mels, self.frames, self.num_classes = n, n_mels, frames, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        label = i % self.num_classes
        feats = torch.randn(self.n_mels, self.frames, generator=g) + 0.05 * label
        return feats, label


class ConvClassifier(nn.Module):
    def __init__(self, n_mels=64, num_classes=35, width=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(n_mels, width, 5, padding=2), nn.BatchNorm1d(width), nn.ReLU(),  # expect: GPU706 info
            nn.Conv1d(width, width, 5, padding=2, stride=2), nn.BatchNorm1d(width), nn.ReLU(),  # expect: GPU706 info
            nn.Conv1d(width, width, 3, padding=1, stride=2), nn.BatchNorm1d(width), nn.ReLU(),  # expect: GPU706 info
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(width, num_classes),
        )

    def forward(self, x):
        return self.net(x)


def train_step(model, feats, labels, optimizer, scaler, clip):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):  # trap: GPU301
        logits = model(feats)
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grad_norm = nn.utils.clip_grad_norm_(model.parameters(), clip)
    scaler.step(optimizer)
    scaler.update()
    torch.cuda.synchronize()  # expect: GPU105
    preds = logits.argmax(dim=-1).tolist()  # expect: GPU103
    return {
        "loss": loss.item(),  # expect: GPU101
        "grad_norm": float(grad_norm),  # expect: GPU101
        "preds": preds,
    }


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    hits, count = 0, 0
    for feats, labels in loader:
        feats, labels = feats.to(device), labels.to(device)  # expect: GPU203 info
        hits += (model(feats).argmax(dim=-1) == labels).sum().item()  # trap: GPU101
        count += labels.numel()
    model.train()
    return hits / max(count, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--clip", type=float, default=5.0)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--out", default="kws.pt")
    args = p.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)

    train_set = SpeechFeatures(100_000)
    val_set = SpeechFeatures(5_000)
    train_sampler = tud.DistributedSampler(train_set)  # expect: GPU501
    train_loader = tud.DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler, num_workers=6)  # expect: GPU201  # expect: GPU204
    val_loader = tud.DataLoader(val_set, batch_size=512, pin_memory=True)  # trap: GPU201

    model = ConvClassifier().to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.3)
    scaler = make_loss_scaler(enabled=True)

    step = 0
    epoch = 0
    while epoch < args.epochs:
        seen_preds = []
        for feats, labels in train_loader:
            feats = feats.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            metrics = train_step(model, feats, labels, optimizer, scaler, args.clip)
            seen_preds.extend(metrics.pop("preds"))
            step += 1
            if step % args.log_every == 0 and rank == 0:
                print(metrics)  # trap: GPU102
                print(f"step {step} loss {metrics['loss']:.4f} gn {metrics['grad_norm']:.2f}")  # trap: GPU102
        scheduler.step()
        acc = evaluate(model, val_loader, device)
        if rank == 0:
            print(f"epoch {epoch} val acc {acc:.4f} ({len(seen_preds)} train predictions)")  # trap: GPU102
            torch.save(model.state_dict(), args.out)  # expect: GPU503
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
