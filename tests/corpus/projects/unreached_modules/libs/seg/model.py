import torch.nn as nn

from .losses import BalancedLoss


class Segmentor(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.head = nn.Conv2d(channels, classes, 1)
        self.loss = BalancedLoss()

    def forward(self, x, target):
        return self.loss(self.head(x), target)
