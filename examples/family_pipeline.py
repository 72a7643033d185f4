"""The input pipeline: how batches reach the GPU, on an imbalanced classification task.

Shows: GPU201, GPU202, GPU203, GPU204, GPU205

A short warm-up pass on synthetic data, then training with a class-balancing sampler;
family_pipeline_fixed.py is the same script with every loader problem addressed.

    python examples/family_pipeline.py --epochs 5
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler


class Tabular(Dataset):
    """Rows of 32 features, jittered per sample; class 0 is nine times as frequent as the others."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.rows = torch.randn(n, 32, generator=g)
        self.labels = torch.where(torch.rand(n, generator=g) < 0.9, 0, torch.randint(1, 4, (n,), generator=g))

    def __len__(self):
        return self.labels.numel()

    def __getitem__(self, i):
        return self.rows[i] + 0.01 * torch.randn(32), self.labels[i]


def parse_args():
    p = argparse.ArgumentParser(description="imbalanced tabular classifier")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=3e-4)
    return p.parse_args()


def train_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def main():
    args = parse_args()
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    warmup_set, train_set = Tabular(10_000, seed=1), Tabular(200_000, seed=2)
    counts = torch.bincount(train_set.labels, minlength=4).float()
    sampler = WeightedRandomSampler((1.0 / counts)[train_set.labels], num_samples=len(train_set))

    warmup_loader = DataLoader(warmup_set, batch_size=args.batch_size, shuffle=True)
    train_loader = DataLoader(
        train_set,
        batch_size=args.batch_size,
        shuffle=True,
        sampler=sampler,
        num_workers=4,
        pin_memory=True,
    )
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 4)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    for x, y in warmup_loader:
        train_step(model, optimizer, x.cuda(), y.cuda())

    for epoch in range(args.epochs):
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            train_step(model, optimizer, x, y)
        print(f"epoch {epoch} done")


if __name__ == "__main__":
    main()
