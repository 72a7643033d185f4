"""Scores a saved checkpoint: the network is only read here."""

import torch

from nets.build import load_for_eval


@torch.no_grad()
def score(cfg, batches, path):
    net = load_for_eval(cfg, path)
    right = 0
    for x, y in batches:
        right += (net(x.to(cfg.device)).argmax(1) == y.to(cfg.device)).sum()
    return right
