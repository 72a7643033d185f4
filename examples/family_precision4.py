"""Float32 training on CUDA with TF32 tensor cores left off.

Shows: GPU305

A multilayer perceptron learns to denoise synthetic signals entirely in float32. Since
torch 1.12 float32 matmuls default to "highest" precision, so on Ampere or newer GPUs the
linear layers skip the TF32 tensor cores. family_precision4_fixed.py allows TF32 with one
line after the imports (`advisor check --fix --unsafe-fixes` inserts it).

    python examples/family_precision4.py --epochs 5
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_dataset(n=50_000, length=512):
    g = torch.Generator().manual_seed(0)
    t = torch.linspace(0, 2 * math.pi, length)
    freq = torch.rand(n, 1, generator=g) * 8 + 1
    clean = torch.sin(freq * t)
    return TensorDataset(clean + 0.3 * torch.randn(n, length, generator=g), clean)


def build_model(length=512, hidden=2048):
    return nn.Sequential(
        nn.Linear(length, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, length)
    )


def main():
    parser = argparse.ArgumentParser(description="float32 denoising MLP")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    device = torch.device("cuda")
    loader = DataLoader(
        make_dataset(), batch_size=512, shuffle=True, num_workers=2, pin_memory=True, persistent_workers=True
    )
    model = build_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        total = torch.zeros((), device=device)
        for noisy, clean in loader:
            noisy = noisy.to(device, non_blocking=True)
            clean = clean.to(device, non_blocking=True)
            loss = F.mse_loss(model(noisy), clean)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        print(f"epoch {epoch}: mse {total.item() / len(loader):.5f}")


if __name__ == "__main__":
    main()
