import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class SwinBlock(nn.Module):
    def __init__(self, dim, recompute=False):
        super().__init__()
        self.attn = nn.Linear(dim, dim)
        self.recompute = recompute

    def forward(self, x):
        if self.recompute:
            return checkpoint(self.attn, x)  # expect: GPU405
        return self.attn(x)


def build_swin(cfg):
    return SwinBlock(96, recompute=cfg['MODEL']['SWIN']['RECOMPUTE'])
