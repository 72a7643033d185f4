"""Helpers of a bonus experiment. Its folder's name is no identifier, so no dotted name reaches
this module: only a script beside it can import it, and none builds the loss below."""
import torch
import torch.nn as nn


class OldMarginLoss(nn.Module):
    def forward(self, logits, target):
        margin = (logits.max(dim=1).values - logits.gather(1, target[:, None]).squeeze(1)).cpu()  # expect: GPU103 info
        return margin.mean().to(logits.device)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)
