"""Building blocks shared by the networks in nets/models.py."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv3x3(in_ch, out_ch):
    return nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1, bias=False)


class ResidualBlock(nn.Module):
    def __init__(self, channels, groups=8):
        super().__init__()
        self.body = nn.Sequential(
            conv3x3(channels, channels),
            nn.GroupNorm(groups, channels),
            nn.SiLU(inplace=True),
            conv3x3(channels, channels),
        )

    def forward(self, x):
        return F.silu(x + self.body(x))


class Mlp(nn.Module):
    def __init__(self, dim, hidden, drop=0.1):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.act(self.fc1(x))))


class MixerBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, 4 * dim)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class StochasticDepth(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = torch.rand(x.shape[0], 1, 1, 1, device=x.device) > self.p
        return x * keep / (1 - self.p)
