import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class MlpBlock(nn.Module):
    def __init__(self, dim, recompute=False):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.recompute = recompute

    def forward(self, x):
        if self.recompute:
            return checkpoint(self.fc, x)  # expect: GPU405 info
        return self.fc(x)
