"""A backbone only the loader above reaches, by the name a config gives."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.net = nn.Linear(z_dim, 64)

    def forward(self, z):
        with torch.cuda.amp.autocast():  # expect: GPU303
            return self.net(z)
