"""Helpers the other modules take with `from common import *`, torch and all."""
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Meter:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n


def accuracy(scores, targets, k):
    """Top-k accuracy of a batch, as a Python number: called on every step, it waits for the GPU."""
    _, ind = scores.topk(k, 1, True, True)
    correct = ind.eq(targets.view(-1, 1).expand_as(ind)).view(-1).float().sum()
    return correct.item() * (100.0 / targets.size(0))  # expect: GPU101


def count_parameters(model):
    # Called once, at set-up: a sync here costs nothing per step.
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
