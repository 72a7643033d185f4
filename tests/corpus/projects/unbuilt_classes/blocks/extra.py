"""Blocks the package re-exports; train.py uses one of them."""

import torch
import torch.nn as nn


class GatedConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, 2 * channels, 3, padding=1)

    def forward(self, x):
        value, gate = self.conv(x).chunk(2, dim=1)
        keep = torch.rand(x.shape[0], 1, 1, 1).to(x.device)  # expect: GPU106
        return value * gate.sigmoid() * (keep > 0.1)


class SqueezeExcite(nn.Module):
    """Re-exported by the package's `__init__.py`, built by nothing."""

    def __init__(self, channels):
        super().__init__()
        self.fc = nn.Linear(channels, channels)

    def forward(self, x):
        keep = torch.rand(x.shape[0], 1).to(x.device)  # expect: GPU106 info
        return x * self.fc(x.mean((2, 3))).sigmoid()[..., None, None] * keep[..., None, None]
