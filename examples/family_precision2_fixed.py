"""bfloat16 training, fixed: the twin of family_precision2.py.

bfloat16 autocast needs no loss scaling, so the GradScaler is gone: backward, clipping and
the optimizer step run directly, and no inf/NaN check makes the host wait every step.

    python examples/family_precision2_fixed.py --epochs 5
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

AMP_DTYPE = torch.bfloat16


def make_dataset(n=100_000, dim=128):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, dim, generator=g)
    w = torch.randn(dim, 1, generator=g) / dim**0.5
    y = torch.sin(x @ w) + 0.1 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


def build_model(dim=128, hidden=1024):
    return nn.Sequential(
        nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1)
    )


def main():
    parser = argparse.ArgumentParser(description="bf16 MLP regression")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    device = torch.device("cuda")
    loader = DataLoader(
        make_dataset(), batch_size=1024, shuffle=True, num_workers=2, pin_memory=True, persistent_workers=True
    )
    model = build_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    for epoch in range(args.epochs):
        total = torch.zeros((), device=device)
        for x, y in loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=AMP_DTYPE):
                loss = F.mse_loss(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.detach()
        print(f"epoch {epoch}: mse {total.item() / len(loader):.5f}")


if __name__ == "__main__":
    main()
