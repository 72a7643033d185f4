"""Selects a recipe by name and trains the detector with it."""
import argparse

import torch

from data import cfg, set_cfg
from layers.loss import MultiBoxLoss


def train(net, loader):
    criterion = MultiBoxLoss(81)
    net = net.cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=cfg.lr)
    for it, (images, conf_t, mask_t) in enumerate(loader):
        conf_data, mask_scores = net(images.cuda(non_blocking=True))
        loss = criterion(conf_data, conf_t.cuda(non_blocking=True), mask_scores, mask_t.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if it >= cfg.max_iter:
            break


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="base_config")
    args = parser.parse_args()
    set_cfg(args.config)
