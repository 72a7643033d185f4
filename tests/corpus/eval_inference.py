"""Evaluate a trained classifier checkpoint and write per-image predictions.

Single GPU:   python eval_inference.py --ckpt runs/resnet/final.pt --images val.npy --labels val_labels.npy
Multi GPU:    torchrun --nproc_per_node=4 eval_inference.py --distributed ...
"""
import argparse
import csv
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ArrayDataset(Dataset):
    def __init__(self, images_path, labels_path=None):
        self.images = np.load(images_path, mmap_mode="r")
        self.labels = np.load(labels_path) if labels_path else None

    def __len__(self):
        return self.images.shape[0]

    def __getitem__(self, i):
        img = torch.from_numpy(np.ascontiguousarray(self.images[i], dtype=np.float32))
        target = int(self.labels[i]) if self.labels is not None else -1  # trap: GPU101
        return img, target, i


def build_model(num_classes):
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, 2, 1), nn.ReLU(), nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, num_classes),
    )


def load_model(path, num_classes, device):
    ckpt = torch.load(path, map_location="cpu")
    state = ckpt.get("model", ckpt)
    state = {k.replace("module.", "", 1): v for k, v in state.items()}  # trap: GPU101
    model = build_model(num_classes)
    missing, unexpected = model.load_state_dict(state, strict=False)
    print(f"missing={missing} unexpected={unexpected}")  # trap: GPU102
    return model.to(device).eval()


@torch.no_grad()
def run_eval(model, loader, device, num_classes, verbose=False):
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.long)
    total_loss, n = 0.0, 0
    for images, labels, _ in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):  # trap: GPU301
            logits = model(images)
        loss = F.cross_entropy(logits.float(), labels)
        total_loss += loss.item() * labels.size(0)  # trap: GPU101
        if verbose:
            print(loss)  # trap: GPU102
        preds = logits.argmax(dim=1)
        for t, p in zip(labels.cpu().tolist(), preds.cpu().tolist()):  # trap: GPU103
            confusion[t, p] += 1
        n += labels.size(0)
    return total_loss / max(n, 1), confusion


def predict(model, loader, tta=False):
    rows = []
    with torch.inference_mode():
        for images, _, idx in loader:
            images = images.cuda(non_blocking=True)
            logits = model(images)
            if tta:
                logits = (logits + model(images.flip(-1))) / 2
            conf, cls = logits.softmax(dim=1).max(dim=1)
            torch.cuda.synchronize()  # trap: GPU105
            print(f"batch mean confidence {conf.mean():.3f}")  # trap: GPU102
            rows.extend(zip(idx.tolist(), cls.cpu().numpy(), conf.to("cpu").tolist()))  # trap: GPU103
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--images", required=True)
    p.add_argument("--labels", default=None)
    p.add_argument("--num-classes", type=int, default=1000)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--distributed", action="store_true")
    p.add_argument("--export", default="")
    p.add_argument("--out", default="predictions.csv")
    args = p.parse_args()

    if args.distributed:
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # trap: GPU101
    device = torch.device("cuda")
    dataset = ArrayDataset(args.images, args.labels)
    sampler = DistributedSampler(dataset) if args.distributed else None  # trap: GPU501
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=8)  # expect: GPU201

    model = load_model(args.ckpt, args.num_classes, device)
    if args.export:
        torch.save(model.state_dict(), args.export)  # trap: GPU503  # expect: GPU504
    if torch.cuda.device_count() > 1 and not args.distributed:
        model = nn.DataParallel(model)  # expect: GPU505 info

    if args.labels:
        val_loss, confusion = run_eval(model, loader, device, args.num_classes)
        acc = (confusion.diag().sum() / confusion.sum()).item()  # trap: GPU101
        per_class = (confusion.diag().float() / confusion.sum(dim=1).clamp(min=1)).numpy()  # trap: GPU103
        print(f"loss {val_loss:.4f} top1 {acc:.4f} worst class {per_class.argmin()}")  # trap: GPU102
    rows = predict(model, loader, tta=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["index", "class", "confidence"])
        writer.writerows(rows)


if __name__ == "__main__":
    main()
