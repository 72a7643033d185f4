"""Detector training: loaders come from utils/datasets.py."""

import torch

from utils.datasets import create_dataloader, create_pageable_loader


def train(model, train_set, val_set, epochs, device):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    dataloader, dataset = create_dataloader(train_set, 16, 8)
    nb = len(dataloader)
    for epoch in range(epochs):
        pbar = enumerate(dataloader)
        for i, (imgs, targets) in pbar:
            ni = i + nb * epoch  # an index, not a tensor
            imgs = imgs.to(device, non_blocking=True).float() / 255
            loss = model(imgs, targets.to(device))  # expect: GPU203
            if ni < 3:
                print(f"warm-up batch {ni}")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluate(model, val_set, device)


@torch.no_grad()
def evaluate(model, val_set, device):
    model.eval()
    for imgs, targets in create_pageable_loader(val_set, 32):
        model(imgs.to(device), targets.to(device))
