"""A layer library others install: no file here trains, its users do, so its forward still
runs on their every step."""

import torch
import torch.nn as nn


class Router(nn.Module):
    def __init__(self, dim, experts):
        super().__init__()
        self.gate = nn.Linear(dim, experts)

    def forward(self, tokens, labels=None):
        scores = self.gate(tokens).softmax(-1)
        load = scores.mean(0).max().item()  # expect: GPU101 info
        return scores / load
