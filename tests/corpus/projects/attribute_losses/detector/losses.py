import torch
import torch.nn as nn


class FocalLoss(nn.Module):
    def forward(self, classifications, annotations):
        losses = []
        for j in range(classifications.shape[0]):
            classification = classifications[j]
            targets = torch.ones(classification.shape).cuda() * -1  # expect: GPU106
            positive = annotations[j, :, 4] != -1
            targets[positive, :] = 0
            losses.append(((classification - targets) ** 2).sum())
        return torch.stack(losses).mean()


class EvalMetric:
    """Not a module: only the evaluation script calls it."""

    def __call__(self, scores, labels):
        return (scores.argmax(1) == labels).float().mean().item()
