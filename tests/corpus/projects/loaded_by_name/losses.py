"""Losses a run builds from the dotted name its config gives (build.py): no file needs to name
them for a run to use them."""

import torch.nn as nn
import torch.nn.functional as F


class SmoothedLoss(nn.Module):
    def forward(self, logits, target):
        host = target.cpu()  # expect: GPU103
        return F.cross_entropy(logits, host.to(logits.device), label_smoothing=0.1)
