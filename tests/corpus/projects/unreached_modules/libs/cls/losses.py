import torch
import torch.nn as nn


class SmoothedLoss(nn.Module):
    """Imported by a module the README runs with `python -m`: it runs."""

    def forward(self, pred, target):
        target = target.cuda(non_blocking=True)
        valid = target >= 0
        count = valid.sum().item()  # expect: GPU101
        return nn.functional.cross_entropy(pred, target.clamp(min=0), label_smoothing=0.1) / max(count, 1)
