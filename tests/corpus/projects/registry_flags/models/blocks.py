import torch.nn as nn
import torch.utils.checkpoint as cp


class Block(nn.Module):
    def __init__(self, dim, with_cp=False, fused_norm=False):
        super().__init__()
        self.with_cp = with_cp
        self.fused_norm = fused_norm
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x):
        if self.fused_norm and x.requires_grad:
            x = cp.checkpoint(self.mlp, x)  # expect: GPU405 info
        if self.with_cp and x.requires_grad:
            return cp.checkpoint(self.mlp, x)  # expect: GPU405
        return self.mlp(x)


class Adapter(nn.Module):
    def __init__(self, dim, depth, with_cp=False):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, with_cp=with_cp) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
