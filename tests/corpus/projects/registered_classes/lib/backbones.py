import torch
import torch.nn as nn
from mmcv.runner import BaseModule

from .registry import BACKBONES


@BACKBONES.register_module()
class ResNet(BaseModule):
    """Named by the shipped config: built."""

    def __init__(self, depth=50):
        super(ResNet, self).__init__()
        self.stem = nn.Conv2d(3, 64, 7, stride=2, padding=3)

    def forward(self, x):
        out = self.stem(x.to(torch.device("cuda"), non_blocking=True))
        print(out.abs().max().item())  # expect: GPU101
        bias = torch.zeros(out.shape[1]).cuda()  # expect: GPU106
        return out + bias[None, :, None, None]


@BACKBONES.register_module()
class VoVNet(nn.Module):
    """Registered, exported, and named by no config: the registry never builds it. Its spare
    method, called by nothing either, lies inside it: what follows it is still the class's."""

    def __init__(self, depth=39):
        super(VoVNet, self).__init__()
        self.stem = nn.Conv2d(3, 64, 3, stride=2, padding=1)

    def spare(self):
        return 0

    def forward(self, x):
        out = self.stem(x.to(torch.device("cuda"), non_blocking=True))
        print(out.abs().max().item())  # expect: GPU101 info
        return self.pool(out)

    def pool(self, feats):
        bias = torch.zeros(feats.shape[1]).cuda()  # expect: GPU106 info
        return feats + bias[None, :, None, None]
