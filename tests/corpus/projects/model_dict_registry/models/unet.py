import torch
from torch import nn


class UNet(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.down = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, frames):
        return self.down(frames[:, -1])


class Smoother(nn.Module):
    """A layer no registry names: its checks stay information."""

    def forward(self, x):
        if torch.isnan(x).any():  # expect: GPU104 info
            x = torch.nan_to_num(x)
        return x
