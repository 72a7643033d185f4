"""Losses the shipped configs name by dotted path; one of them no config names."""

import torch.nn as nn
import torch.nn.functional as F


class SmoothedLoss(nn.Module):
    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103
        return F.cross_entropy(logits, host.to(logits.device), label_smoothing=0.1)


class OldEdgeLoss(nn.Module):
    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103 info
        return F.cross_entropy(logits, host.to(logits.device))
