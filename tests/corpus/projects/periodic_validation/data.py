"""Loaders built in their own module; the entry script validates only every few epochs."""
import torch
from torchvision import datasets, transforms


def build_loaders(root, batch_size):
    transform = transforms.ToTensor()
    train_loader = torch.utils.data.DataLoader(  # expect: GPU204
        datasets.ImageFolder(f"{root}/train", transform),
        batch_size=batch_size,
        shuffle=True,
        num_workers=8,
        pin_memory=True,
    )
    val_loader = torch.utils.data.DataLoader(
        datasets.ImageFolder(f"{root}/val", transform),
        batch_size=batch_size,
        num_workers=8,
        pin_memory=True,
    )
    return train_loader, val_loader
