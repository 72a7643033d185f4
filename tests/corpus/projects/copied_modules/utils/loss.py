import torch
from torch import nn


class VarifocalLoss(nn.Module):
    def forward(self, pred, gt, label):  # expect: GPU701 info
        weight = pred.sigmoid().pow(2) * (1 - label) + gt * label
        with torch.cuda.amp.autocast(enabled=False):  # expect: GPU303 info
            return (nn.functional.binary_cross_entropy_with_logits(pred.float(), gt.float(), reduction="none") * weight).sum()


class SmoothL1(nn.Module):
    def forward(self, pred, target):
        with torch.cuda.amp.autocast(enabled=False):  # expect: GPU303
            return nn.functional.smooth_l1_loss(pred.float(), target.float())


class ComputeLoss:
    def __init__(self):
        self.box = SmoothL1()
        # self.vfl = VarifocalLoss()

    def __call__(self, pred, target):
        return self.box(pred, target)
