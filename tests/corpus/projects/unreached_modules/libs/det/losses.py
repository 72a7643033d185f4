import torch
import torch.nn as nn

from .registry import register


@register
class GradientHarmonizedLoss(nn.Module):
    """The detector family's loss, built by name from its registry: the project imports the
    segmentation part of the copy only, and the copy's other entry module (`init_det.py`) is
    imported by nothing, so none of this runs."""

    def forward(self, pred, target):
        target = target.cuda(non_blocking=True)
        valid = target >= 0
        count = valid.sum().item()  # expect: GPU101 info
        return nn.functional.binary_cross_entropy_with_logits(pred, target.float()) / max(count, 1)
