"""Retrieval fine-tuning: the loaders come back as a list, one per split."""

import torch

from utils.datasets import create_loaders, create_mixed_loaders


@torch.no_grad()
def embed(model, data_loader, device):
    model.eval()
    feats = []
    for image, _ in data_loader:
        image = image.to(device)  # expect: GPU203
        feats.append(model(image))
    return torch.cat(feats)


@torch.no_grad()
def embed_mixed(model, data_loader, device):
    model.eval()
    feats = []
    for image, _ in data_loader:
        feats.append(model(image.to(device)))
    return feats


def main(model, datasets, extra, device="cuda"):
    train_loader, val_loader = create_loaders(datasets, [32, 64], [4, 4])
    first, second = create_mixed_loaders(datasets, extra)
    embed(model, val_loader, device)
    return embed_mixed(model, first, device) + embed_mixed(model, second, device)
