"""Assigns predictions to targets on every step: the criterion calls it from its forward."""
import torch
from scipy.optimize import linear_sum_assignment
from torch import nn


class HungarianMatcher(nn.Module):
    def __init__(self, cost_class=1.0):
        super().__init__()
        self.cost_class = cost_class

    @torch.no_grad()
    def forward(self, outputs, targets):
        cost = torch.cdist(outputs["pred_boxes"], targets[0]["boxes"])
        cost = cost.cpu()  # expect: GPU103
        return [linear_sum_assignment(c) for c in cost.split(1, -1)]


def build_matcher(args):
    return HungarianMatcher(cost_class=args.set_cost_class)
