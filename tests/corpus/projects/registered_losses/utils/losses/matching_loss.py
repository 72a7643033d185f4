import torch

from ._base import WeightedLoss
from .builder import LOSSES


# The trainer builds it from the config's name and calls it with the model: a criterion, once
# per step, though its base class sits in another module.
@LOSSES.register()
class MatchingLoss(WeightedLoss):
    def forward(self, inputs, targets, net):
        outputs = net(inputs)
        cost = torch.cdist(outputs, targets)
        order = cost.cpu().argmin(dim=1)  # expect: GPU103
        matched = targets[order.to(outputs.device)]
        normalizer = torch.clamp(torch.as_tensor(len(targets), device=outputs.device), min=1).item()  # expect: GPU101
        return (outputs - matched).abs().sum() / normalizer
