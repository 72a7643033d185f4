"""Semi-supervised DDP training (pseudo-labels on unlabeled images) with gradient accumulation.

Every distributed-training rule fires once here; family_distributed_fixed.py is the same
script with the findings addressed.

    torchrun --nproc_per_node=4 examples/family_distributed.py --epochs 10 --accum-steps 4

Shows: GPU501, GPU502, GPU503, GPU504, GPU505, GPU506, GPU507
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

SEED = 42


class RandomImages(Dataset):
    """Deterministic random images, the same on every rank."""

    def __init__(self, n, num_classes=10):
        g = torch.Generator().manual_seed(n)
        self.images = torch.randn(n, 3, 32, 32, generator=g)
        self.labels = torch.randint(0, num_classes, (n,), generator=g)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


def build_model(num_classes=10):
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(128, num_classes),
    )


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--accum-steps", type=int, default=4)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--out", default="runs/ssl")
    return p.parse_args()


def main():
    args = parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(SEED)
    os.makedirs(args.out, exist_ok=True)

    labeled, unlabeled = RandomImages(10_000), RandomImages(50_000)
    labeled_sampler = DistributedSampler(labeled)
    labeled_loader = DataLoader(labeled, batch_size=args.batch_size, sampler=labeled_sampler, num_workers=4, pin_memory=True)
    unlabeled_loader = DataLoader(unlabeled, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True)

    model = DDP(build_model().to(device), device_ids=[local_rank], find_unused_parameters=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)

    for epoch in range(args.epochs):
        model.train()
        for i, ((x, y), (u, _)) in enumerate(zip(labeled_loader, unlabeled_loader)):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            u = u.to(device, non_blocking=True)
            logits = model(torch.cat([x, u]))
            pseudo = logits[len(x):].detach().argmax(dim=1)
            loss = F.cross_entropy(logits[: len(x)], y) + 0.5 * F.cross_entropy(logits[len(x):], pseudo)
            (loss / args.accum_steps).backward()
            if (i + 1) % args.accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        torch.save({"model": model.state_dict(), "epoch": epoch}, os.path.join(args.out, "last.pt"))

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
