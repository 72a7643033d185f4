"""Builds the network, wrapped for several GPUs, for the training and evaluation scripts."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))

    def forward(self, x):
        return self.body(x)


def build_net(cfg):
    net = Net(cfg.width).to(cfg.device)
    net = torch.nn.DataParallel(net)  # expect: GPU505
    return net


def load_for_eval(cfg, path):
    net = nn.DataParallel(Net(cfg.width).to(cfg.device))  # expect: GPU505 info
    net.load_state_dict(torch.load(path, map_location=cfg.device))
    return net.eval()
