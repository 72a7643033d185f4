"""mmseg-style blocks: the flag is on only where a test builds the block with it."""

import torch.nn as nn
import torch.utils.checkpoint as cp


class BasicBlock(nn.Module):
    def __init__(self, channels, with_cp=False):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.with_cp = with_cp

    def forward(self, x):
        def inner(x):
            return self.conv(x).relu() + x

        if self.with_cp and x.requires_grad:
            return cp.checkpoint(inner, x)  # expect: GPU405 info
        return inner(x)


class Backbone(nn.Module):
    def __init__(self, channels=16, depth=4, with_cp=False):
        super().__init__()
        self.with_cp = with_cp
        self.layers = nn.Sequential(*[BasicBlock(channels, with_cp=self.with_cp) for _ in range(depth)])

    def forward(self, x):
        return self.layers(x)
