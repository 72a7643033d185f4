import torch.nn as nn

from .registry import BACKBONES, LOSSES, MODELS


@MODELS.register_module()
class Segmentor(nn.Module):
    def __init__(self, backbone, loss):
        super().__init__()
        self.backbone = BACKBONES.build(backbone)
        self.head = nn.Conv2d(64, 21, 1)
        self.loss = LOSSES.build(loss)

    def forward(self, images, masks):
        return self.loss(self.head(self.backbone(images)), masks)
