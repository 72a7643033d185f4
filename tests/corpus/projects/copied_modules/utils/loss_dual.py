import torch
from torch import nn


class VarifocalLoss(nn.Module):
    def forward(self, pred, gt, label):  # expect: GPU701 info
        weight = pred.sigmoid().pow(2) * (1 - label) + gt * label
        with torch.cuda.amp.autocast(enabled=False):  # expect: GPU303
            return (nn.functional.binary_cross_entropy_with_logits(pred.float(), gt.float(), reduction="none") * weight).sum()


class ComputeLoss:
    def __init__(self):
        self.vfl = VarifocalLoss()

    def __call__(self, pred, gt, label):
        return self.vfl(pred, gt, label)
