"""Host-device synchronisation, fixed: the twin of family_sync.py with no waits in the loop.

Values stay on the GPU during the epoch (a running loss tensor, predictions gathered with
`torch.cat`), unknown labels are skipped by `ignore_index` instead of a boolean mask, and
tensors are created on the device. The host reads results once per epoch.

    python examples/family_sync_fixed.py --epochs 3
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class NoisyLabels(Dataset):
    """Random feature vectors; about one label in ten is unknown (-1) and must be ignored."""

    def __init__(self, n=20_000, dim=64, num_classes=5):
        g = torch.Generator().manual_seed(0)
        self.features = torch.randn(n, dim, generator=g)
        self.labels = torch.randint(0, num_classes, (n,), generator=g)
        self.labels[torch.rand(n, generator=g) < 0.1] = -1

    def __len__(self):
        return self.labels.numel()

    def __getitem__(self, i):
        return self.features[i], self.labels[i]


def parse_args():
    p = argparse.ArgumentParser(description="classifier with ignored labels")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    return p.parse_args()


def main():
    args = parse_args()
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    loader = DataLoader(
        NoisyLabels(),
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=4,
        pin_memory=True,
        persistent_workers=True,
    )
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 5)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    class_weights = torch.tensor([1.0, 1.0, 2.0, 2.0, 4.0], device=device)

    for epoch in range(args.epochs):
        running = torch.zeros((), device=device)
        predictions = []
        for x, y in loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            logits = model(x + torch.randn(x.shape, device=device) * 0.01)
            loss = F.cross_entropy(logits, y, weight=class_weights, ignore_index=-1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.detach()
            predictions.append(logits.detach().argmax(dim=1))
        mean_loss = running.item() / len(loader)  # one read per epoch
        if mean_loss != mean_loss:
            raise FloatingPointError(f"NaN loss in epoch {epoch}")
        count = torch.cat(predictions).numel()
        print(f"epoch {epoch}: mean loss {mean_loss:.4f}, {count} predictions")


if __name__ == "__main__":
    main()
