"""Position embeddings: the detector uses the sine one; the relative one is exported beside it
and built nowhere."""

import math

import torch
import torch.nn as nn


class SinePositionEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        steps = torch.arange(x.shape[1]).to(x.device)  # expect: GPU106
        scale = torch.exp(torch.arange(0, self.dim, 2, device=x.device) * (-math.log(10000.0) / self.dim))
        angles = steps[:, None] * scale[None]
        return torch.cat([angles.sin(), angles.cos()], dim=-1)


class RelPositionEmbedding(nn.Module):
    def __init__(self, dim, size):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(2 * size - 1, dim))
        self.size = size

    def forward(self, x):
        coords = torch.arange(self.size).to(x.device)  # expect: GPU106 info
        relative = coords[:, None] - coords[None] + self.size - 1
        return self.table[relative]
