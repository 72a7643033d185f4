import torch

from ._base import WeightedLoss
from .builder import LOSSES


# Built on the same base, but no loss by its name: a base in another module says nothing of how
# often a class that is not a criterion runs.
@LOSSES.register()
class WeightedMetric(WeightedLoss):
    def forward(self, inputs, targets, net):
        outputs = net(inputs)
        hits = (outputs.argmax(dim=1) == targets).float()
        return hits.mean().item()
