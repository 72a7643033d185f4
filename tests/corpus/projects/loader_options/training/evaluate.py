"""Evaluation loop: its loader options are adjusted by a project hook before they arrive."""

import torch
from torch.utils.data import DataLoader


def evaluate(model, dataset=None, loader_kwargs={}, device="cuda"):
    loader = DataLoader(dataset, batch_size=256, **loader_kwargs)
    correct = 0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            correct += (model(images).argmax(1) == labels).sum()
    return correct
