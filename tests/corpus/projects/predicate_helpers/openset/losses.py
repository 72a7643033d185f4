import torch
from torch import Tensor, nn

from .utils import is_known, shifted


class CenterLoss(nn.Module):
    def __init__(self, classes, dim):
        super().__init__()
        self.centers = nn.Parameter(torch.randn(classes, dim))

    def forward(self, distances: Tensor, target: Tensor) -> Tensor:
        known = is_known(target)
        if known.any():  # expect: GPU104
            return distances[known].gather(1, target[known].view(-1, 1)).mean()  # expect: GPU104
        return distances.sum() * 0


def count_known(labels_list):
    # Plain Python labels: the helper's comparison is a bool here.
    return sum(1 for label in labels_list if is_known(label))


def first_known(ids):
    # A list of ids shifted by one: no tensor at this call.
    return [shifted(i) for i in ids if shifted(i) > 0]
