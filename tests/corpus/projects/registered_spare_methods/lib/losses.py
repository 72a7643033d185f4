import torch
import torch.nn as nn
from mmcv.runner import BaseModule

from .registry import LOSSES


@LOSSES.register_module(name="Focal")
class FocalLoss(BaseModule):
    """Registered under a name of its own, which the config gives: built."""

    def forward(self, pred, target):
        target = target.cuda(non_blocking=True)
        valid = (target >= 0).sum().item()  # expect: GPU101
        return nn.functional.cross_entropy(pred, target.clamp(min=0)) / max(valid, 1)


@LOSSES.register_module()
class GHMLoss(BaseModule):
    """Registered and named by no config."""

    def forward(self, pred, target):
        target = target.cuda(non_blocking=True)
        valid = (target >= 0).sum().item()  # expect: GPU101 info
        return nn.functional.cross_entropy(pred, target.clamp(min=0)) / max(valid, 1)
