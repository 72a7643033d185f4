"""Criteria chosen on the command line by class name: train.py looks them up with getattr."""

import torch.nn as nn
import torch.nn.functional as F


class SoftTargets(nn.Module):
    def forward(self, logits, target):
        weights = target.float().mean(0).cpu()  # expect: GPU103
        return F.cross_entropy(logits, target) * weights.sum().to(logits.device)
