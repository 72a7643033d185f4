import torch
import torch.nn as nn


class BalancedLoss(nn.Module):
    """The copy's loss that the project's model uses."""

    def forward(self, pred, target):
        valid = target >= 0
        count = valid.sum().item()  # expect: GPU101
        return nn.functional.cross_entropy(pred, target.clamp(min=0)) / max(count, 1)
