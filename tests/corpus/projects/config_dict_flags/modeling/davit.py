import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class DaViTStage(nn.Module):
    def __init__(self, dim, enable_checkpoint=False):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.enable_checkpoint = enable_checkpoint

    def forward(self, x):
        if self.enable_checkpoint:
            return checkpoint(self.proj, x)  # expect: GPU405 info
        return self.proj(x)


def build_davit(spec):
    return DaViTStage(spec['DIM'], enable_checkpoint=spec.get('ENABLE_CHECKPOINT', False))
