"""An old backbone outside the loaded package that nothing imports or names."""
import torch
import torch.nn as nn


class OldGenerator(nn.Module):
    def __init__(self, z_dim):
        super().__init__()
        self.net = nn.Linear(z_dim, 64)

    def forward(self, z):
        with torch.cuda.amp.autocast():  # expect: GPU303 info
            return self.net(z)
