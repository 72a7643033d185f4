import torch.nn as nn

from nets.backbones import resnet
from nets.backbones.resnext import Bottleneck


class DoubleHead(nn.Module):
    def __init__(self, channels):
        super().__init__()
        # The ResNeXt block (a subclass that kept its base's name), and the plain one by module.
        self.grouped = Bottleneck(channels, channels, groups=8)
        self.plain = resnet.Bottleneck(channels, channels)

    def forward(self, x):
        return self.plain(self.grouped(x))
