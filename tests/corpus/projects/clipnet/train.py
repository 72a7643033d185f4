"""Run from the folder above the clone: `python -m clipnet.train`."""

import torch

import clipnet.util.meters as meters
from clipnet.util.data import make_loader


def train(net, dataset, opt, epochs):
    loader = make_loader(dataset, 64)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(net(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(meters.reduce_mean(loss))
