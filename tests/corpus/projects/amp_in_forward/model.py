"""A detector whose forward runs under float16 autocast when built with `amp=True`."""
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self, amp=False):
        super().__init__()
        self.amp = amp
        self.backbone = nn.Conv2d(3, 16, 3, padding=1)
        self.head = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        if self.amp:
            with torch.cuda.amp.autocast():  # expect: GPU303
                return self.head(torch.relu(self.backbone(x)))
        return self.head(torch.relu(self.backbone(x)))
