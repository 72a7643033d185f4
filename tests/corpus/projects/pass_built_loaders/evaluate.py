"""Evaluation helpers the training script calls once per epoch."""
import torch


@torch.no_grad()
def compute_metrics(model, dataset, device):
    # A new loader on each call: persistent workers would have nothing to carry over.
    data_loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=False, num_workers=8, pin_memory=True)
    total = 0.0
    for poses, texts in data_loader:
        total += model.score(poses.to(device, non_blocking=True), texts.to(device, non_blocking=True))
    return total


@torch.no_grad()
def score_loader(model, loader, device):
    total = 0.0
    for poses, texts in loader:
        total += model.score(poses.to(device, non_blocking=True), texts.to(device, non_blocking=True))
    return total


def make_val_loader(dataset):
    return torch.utils.data.DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)  # expect: GPU204
