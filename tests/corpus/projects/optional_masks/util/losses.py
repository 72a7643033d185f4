import torch
import torch.nn as nn


class DiceLoss(nn.Module):
    """`ignore` is optional: one script passes a mask of the pixels to leave out, the other none."""

    def __init__(self, n_classes):
        super().__init__()
        self.n_classes = n_classes

    def _dice(self, score, target, ignore):
        inter = torch.sum(score[ignore != 1] * target[ignore != 1])  # expect: GPU104
        union = torch.sum(score) + torch.sum(target)
        return 1 - (2 * inter + 1e-5) / (union + 1e-5)

    def forward(self, inputs, target, ignore=None):
        loss = 0.0
        for i in range(self.n_classes):
            loss += self._dice(inputs[:, i], target[:, i], ignore)
        return loss / self.n_classes


def masked_mean(values, weights=None):
    # Every call leaves `weights` out: nothing is known to be a tensor here.
    if weights is None:
        return values.mean()
    return (values * weights).sum() / weights.sum()
