"""Small CNN with a focal loss, trained in fp16 on one GPU: compilation and kernel settings.

Shows: GPU701, GPU702, GPU703, GPU704, GPU705, GPU706

Run `advisor check --show-info examples/family_compile.py`; family_compile_fixed.py is the
same script with every finding addressed.

    python examples/family_compile.py --epochs 5
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class FocalLoss(nn.Module):
    """Cross-entropy that down-weights easy examples: alpha * (1 - p) ** gamma * CE."""

    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, logits, target):
        ce = F.cross_entropy(logits, target, reduction="none")
        p = torch.exp(-ce)
        loss = self.alpha * (1 - p) ** self.gamma * ce
        return loss.mean()


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SmallNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            conv_block(3, 64), nn.MaxPool2d(2), conv_block(64, 128), nn.AdaptiveAvgPool2d(1)
        )
        self.proj = nn.Linear(128, 300)
        self.head = nn.Linear(300, num_classes)

    def forward(self, x):
        return self.head(F.relu(self.proj(self.features(x).flatten(1))))


@torch.compile
def batch_accuracy(logits, target):
    hits = (logits.argmax(dim=1) == target).float().mean()
    return hits.item()


def parse_args():
    p = argparse.ArgumentParser(description="focal-loss CNN on random 32x32 images")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.05)
    return p.parse_args()


def main():
    args = parse_args()
    torch.autograd.set_detect_anomaly(True)
    device = torch.device("cuda")
    data = TensorDataset(torch.randn(20_000, 3, 32, 32), torch.randint(0, 10, (20_000,)))
    loader = DataLoader(
        data, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True,
        persistent_workers=True, drop_last=True,
    )

    model = SmallNet().to(device)
    criterion = FocalLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, foreach=False)
    scaler = torch.amp.GradScaler("cuda")

    for epoch in range(args.epochs):
        fast_model = torch.compile(model)
        total = torch.zeros((), device=device)
        for x, y in loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits = fast_model(x)
                loss = criterion(logits, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            total += loss.detach()
        acc = batch_accuracy(logits.detach(), y)
        print(f"epoch {epoch}: loss {total.item() / len(loader):.4f}, last batch accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
