import argparse
import importlib

import torch
import criteria
import heads
from losses import BalancedLoss, FocalLoss
from losses import SmoothedLoss as Smoothed
from blocks import GatedConv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--criterion", default="SoftTargets")
    parser.add_argument("--arch", default="conv1x1")
    parser.add_argument("--head", required=True)
    # OldEdgeLoss was tried on the first runs and dropped.
    parser.add_argument("--edges", action="store_true", help="unused since OldEdgeLoss was dropped")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    # Loads a module of the `archs` package by name: no class of losses.py comes this way.
    arch = importlib.import_module("archs." + args.arch)
    model = torch.nn.Sequential(GatedConv(3), arch.build(3, 4), getattr(heads, args.head)(4)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    balanced = BalancedLoss()
    smoothed = Smoothed()
    chosen = getattr(criteria, args.criterion)()
    model.train()
    for step in range(1000):
        images = torch.randn(8, 3, 32, 32, device="cuda")
        target = torch.randint(0, 4, (8, 32, 32), device="cuda")
        logits = model(images)
        loss = balanced(logits, target) + chosen(logits, target) + smoothed(logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
