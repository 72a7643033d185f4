import torch
import torch.nn as nn

from .registry import register_head


@register_head
class PolylineHead(nn.Module):
    """A sub-project of the repository with a licence of its own: nothing outside it imports it,
    and its configs load its modules as a plugin folder, so they are not dead."""

    def forward(self, feats, target):
        target = target.cuda(non_blocking=True)
        valid = target >= 0
        count = valid.sum().item()  # expect: GPU101
        return nn.functional.l1_loss(feats, target.float()) / max(count, 1)
