import torch.nn as nn
from torch.utils.checkpoint import checkpoint

from modeling.focal import build_focal


class Head(nn.Module):
    """Its own flag of the same name, which the base config turns on."""

    def __init__(self, cfg):
        super().__init__()
        self.backbone = build_focal(cfg)
        self.fc = nn.Linear(96, 10)
        self.use_checkpoint = cfg['MODEL']['HEAD']['RECOMPUTE_FC']

    def forward(self, x):
        x = self.backbone(x)
        if self.use_checkpoint:
            return checkpoint(self.fc, x)  # expect: GPU405
        return self.fc(x)
