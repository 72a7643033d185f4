"""Heads the options pick by name through the package (`getattr(heads, name)`)."""

import torch
import torch.nn as nn


class ConvHead(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv = nn.Conv2d(classes, classes, 1)

    def forward(self, x):
        keep = torch.rand(x.shape[0], 1, 1, 1).to(x.device)  # expect: GPU106
        return self.conv(x) * (keep > 0.1)
