"""Wrapped whatever the GPU count, but the README runs it with one GPU visible."""
import argparse

import torch
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.device("cuda")
    model = torch.nn.Linear(768, 2).to(device)
    model = torch.nn.DataParallel(model)  # expect: GPU505 info
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    loader = DataLoader(torch.load("features.pt"), batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(args.epochs):
        for features, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(features.to(device, non_blocking=True)),
                                                     labels.to(device, non_blocking=True))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
