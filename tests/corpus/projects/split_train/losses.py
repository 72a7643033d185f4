"""Losses: called as modules (`criterion(pred, target)`), so `forward` runs on every step."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class BoxLoss(nn.Module):
    def __init__(self, weight=1.0):
        super().__init__()
        self.weight = weight
        self.history = []

    def forward(self, pred, target):
        mask = target[..., 0] > 0
        n_pos = mask.sum().item()  # expect: GPU101
        loss = F.smooth_l1_loss(pred[..., 1:], target[..., 1:], reduction="sum")
        return self.weight * loss / max(n_pos, 1)

    def summary(self):
        # trap: GPU101 (called once per epoch, after the loop)
        return torch.stack(self.history).mean().item() if self.history else 0.0
