"""Mixed precision through the legacy AMP entry point, with nothing scaling the loss.

Shows: GPU301, GPU303

A small transformer encoder classifies synthetic token sequences. The forward pass runs under
`torch.cuda.amp.autocast()`, which is deprecated and computes in float16 by default, and no
GradScaler protects the small gradients from underflowing. family_precision_fixed.py uses
`torch.amp.autocast("cuda", ...)` with a `torch.amp.GradScaler`.
(family_precision2.py to family_precision4.py show the other precision rules, which cannot
share one script: each needs a different precision setup.)

    python examples/family_precision.py --epochs 3
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast
from torch.utils.data import DataLoader, Dataset


class Sequences(Dataset):
    """Random token sequences labelled by their most frequent token, modulo the class count."""

    def __init__(self, n=50_000, length=64, vocab=1000, num_classes=8):
        g = torch.Generator().manual_seed(0)
        self.tokens = torch.randint(0, vocab, (n, length), generator=g)
        self.labels = self.tokens.mode(dim=1).values % num_classes

    def __len__(self):
        return self.labels.numel()

    def __getitem__(self, i):
        return self.tokens[i], self.labels[i]


class Encoder(nn.Module):
    def __init__(self, vocab=1000, dim=256, num_classes=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=8, dim_feedforward=4 * dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=4)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


def main():
    parser = argparse.ArgumentParser(description="fp16 sequence classifier")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()

    device = torch.device("cuda")
    loader = DataLoader(
        Sequences(), batch_size=128, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True
    )
    model = Encoder().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        total = torch.zeros((), device=device)
        for tokens, labels in loader:
            tokens = tokens.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            with autocast():
                loss = F.cross_entropy(model(tokens), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        print(f"epoch {epoch}: mean loss {total.item() / len(loader):.4f}")


if __name__ == "__main__":
    main()
