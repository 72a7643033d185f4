"""Validation helpers: the loader builder and the pass that goes over it sit side by side."""
import torch
from torch.utils.data import DataLoader


def create_validation_loader(dataset, batch_size, workers):
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True)  # expect: GPU204


def create_test_loader(dataset, batch_size, workers):
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=True)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = 0
    for images, targets in loader:
        correct += (model(images.to(device, non_blocking=True)).argmax(1) == targets.to(device, non_blocking=True)).sum()
    return correct
