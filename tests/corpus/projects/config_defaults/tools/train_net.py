"""Training entry point: the config node goes from function to function."""

import torch

from videonet.config.defaults import assert_and_infer_cfg, get_cfg
from videonet.datasets import loader


def train_epoch(train_loader, model, optimizer, cfg):
    model.train()
    for inputs, labels in train_loader:
        if cfg.NUM_GPUS:
            inputs = inputs.cuda(non_blocking=True)
            labels = labels.cuda()  # expect: GPU203
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def eval_epoch(val_loader, model, cfg):
    model.eval()
    for inputs, labels in val_loader:
        inputs, labels = inputs.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        model(inputs)


@torch.no_grad()
def prefetch_pass(prefetch_loader, model):
    model.eval()
    for inputs, _ in prefetch_loader:
        model(inputs.cuda())


@torch.no_grad()
def flat_pass(flat_loader, model):
    model.eval()
    for inputs, _ in flat_loader:
        model(inputs.cuda())


def train(cfg, model, train_set, val_set):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = loader.construct_loader(cfg, train_set, "train")
    val_loader = loader.construct_loader(cfg, val_set, "val")
    prefetch_loader = loader.construct_prefetch_loader(cfg, val_set)
    flat_loader = loader.construct_flat_loader(cfg, val_set)
    for epoch in range(cfg.TRAIN.MAX_EPOCH):
        train_epoch(train_loader, model, optimizer, cfg)
        eval_epoch(val_loader, model, cfg)
        prefetch_pass(prefetch_loader, model)
        flat_pass(flat_loader, model)


@torch.no_grad()
def test(cfg, model, test_set):
    model.eval()
    correct = 0
    for inputs, labels in loader.construct_test_loader(cfg, test_set):
        preds = model(inputs.cuda(non_blocking=True)).argmax(1)
        correct += (preds == labels.cuda(non_blocking=True)).sum()
    return correct


def main(model, train_set, val_set):
    cfg = assert_and_infer_cfg(get_cfg())
    train(cfg, model.cuda(), train_set, val_set)
    return test(cfg, model, val_set)
