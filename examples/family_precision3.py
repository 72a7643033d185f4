"""Training a model whose weights were cast to float16.

Shows: GPU304

An image classifier is fine-tuned "in half precision" by casting the whole model with
`.half()` and handing its parameters to a plain `torch.optim` optimizer. The weights
themselves are now float16: updates smaller than half the gap between neighbouring float16
values round away, so much of the learning silently disappears. family_precision3_fixed.py
keeps float32 weights and computes in bfloat16 under autocast.

    python examples/family_precision3.py --epochs 5
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_dataset(n=60_000, num_classes=10):
    g = torch.Generator().manual_seed(0)
    images = torch.randn(n, 1, 28, 28, generator=g)
    labels = (images.mean(dim=(1, 2, 3)) * 40).long().clamp(-5, 4) + 5
    return TensorDataset(images, labels % num_classes)


class Classifier(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 256), nn.ReLU(), nn.Linear(256, num_classes))

    def forward(self, x):
        return self.head(self.features(x))


def main():
    parser = argparse.ArgumentParser(description="half-precision fine-tuning")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True  # fixed 28x28 inputs
    loader = DataLoader(
        make_dataset(), batch_size=256, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True
    )
    model = Classifier().to(device).half()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    for epoch in range(args.epochs):
        correct = torch.zeros((), dtype=torch.long, device=device)
        for images, labels in loader:
            images = images.to(device, non_blocking=True).half()
            labels = labels.to(device, non_blocking=True)
            logits = model(images)
            loss = F.cross_entropy(logits.float(), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            correct += (logits.argmax(dim=1) == labels).sum()
        print(f"epoch {epoch}: train accuracy {correct.item() / len(loader.dataset):.3f}")


if __name__ == "__main__":
    main()
