import torch
import torch.nn as nn


class SILogLoss(nn.Module):
    def forward(self, pred, target, mask):  # expect: GPU701 info
        g = torch.log(pred[mask]) - torch.log(target[mask])
        return torch.sqrt(g.var() + 0.15 * g.mean() ** 2)


def scale_and_shift(prediction, target, mask):
    a = torch.sum(mask * prediction * prediction, (1, 2))
    b = torch.sum(mask * prediction * target, (1, 2))
    valid = a > 0
    scale = torch.zeros_like(a)
    scale[valid] = b[valid] / a[valid]  # expect: GPU104 info, GPU104 info
    return scale


class ScaleShiftLoss(nn.Module):
    def forward(self, prediction, target, mask):
        scale = scale_and_shift(prediction, target, mask)
        return ((scale[:, None, None] * prediction - target) ** 2)[mask].mean()
