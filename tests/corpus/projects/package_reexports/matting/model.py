import torch
import torch.nn as nn

from .refiner import Refiner


class MattingBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(6, 32, 3, padding=1)
        self.head = nn.Conv2d(32, 4, 1)

    def forward(self, src, bgr):
        return self.head(torch.relu(self.backbone(torch.cat([src, bgr], dim=1))))


class MattingRefine(MattingBase):
    def __init__(self, mode="sampling"):
        super().__init__()
        self.refiner = Refiner(mode)

    def forward(self, src, bgr):
        coarse = super().forward(src, bgr)
        return self.refiner(src, bgr, coarse)
