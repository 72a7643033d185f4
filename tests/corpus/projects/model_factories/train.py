"""Trains the network that nets.build makes."""

import torch

from nets.build import build_net


def main(cfg, batches):
    net = build_net(cfg)
    opt = torch.optim.SGD(net.parameters(), lr=cfg.lr)
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(net(x.to(cfg.device)), y.to(cfg.device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
