"""Losses: called as modules (`criterion(pred, target)`), so `forward` runs on every step."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class BoxLoss(nn.Module):
    def __init__(self, weight=1.0, autobalance=False):
        super().__init__()
        self.weight, self.autobalance = weight, autobalance
        self.balance = 1.0
        self.history = []

    def forward(self, pred, target):
        mask = target[..., 0] > 0
        n_pos = mask.sum().item()  # expect: GPU101
        loss = F.smooth_l1_loss(pred[..., 1:], target[..., 1:], reduction="sum")
        if self.autobalance:
            # no construction of the project turns autobalance on: a branch that never runs here
            self.balance = 0.99 * self.balance + 0.01 / loss.detach().item()  # expect: GPU101 info
        return self.weight * loss / max(n_pos, 1)


class ScoreLoss(nn.Module):
    def __init__(self, track=False):
        super().__init__()
        self.track = track
        self.seen = 0.0

    def forward(self, pred, target):
        loss = F.binary_cross_entropy_with_logits(pred[..., 0], (target[..., 0] > 0).float())
        if self.track:
            # train.py builds it with track=True
            self.seen += loss.item()  # expect: GPU101
        return loss

    def summary(self):
        # trap: GPU101 (called once per epoch, after the loop)
        return torch.stack(self.history).mean().item() if self.history else 0.0
