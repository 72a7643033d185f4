"""Training entry point: `python tools/train_net.py --cfg configs/kinetics.yaml`."""

import torch

from netlib.blocks import Backbone
from netlib.defaults import get_cfg
from netlib.loader import construct_loader
from netlib.swin import build_swin
from netlib.swin_config import add_swin_config


def train_epoch(loader, model, optimizer, cfg):
    model.train()
    for inputs, labels in loader:
        inputs = inputs.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if cfg.DETECTION.ENABLE:
            loss = loss.item()  # expect: GPU101 info
        if cfg.LOG.EVERY_STEP:
            print("loss", loss.item())  # expect: GPU101


def main(dataset, cfg_file):
    cfg = get_cfg()
    add_swin_config(cfg)
    cfg.merge_from_file(cfg_file)
    model = torch.nn.Sequential(Backbone(), build_swin(cfg)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = construct_loader(cfg, dataset)
    for epoch in range(cfg.TRAIN.MAX_EPOCH):
        train_epoch(loader, model, optimizer, cfg)


if __name__ == "__main__":
    import sys

    main(torch.load(sys.argv[1]), sys.argv[2])
