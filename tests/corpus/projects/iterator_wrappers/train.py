"""The step loop: batches come from next() on a generator and on an iterator made again when
it runs out; the loaders live in data.py."""

import itertools

import torch
from torch.utils.data import DataLoader

from data import build_loader, infinite, unlabeled_loader


def main(cfg, model, optimizer, labeled_set, unlabeled_set, probe_set):
    loader = build_loader(labeled_set, cfg.batch_size, cfg.rank, cfg.world_size)
    batches = infinite(loader)
    u_loader = unlabeled_loader(unlabeled_set, cfg.batch_size * 7)
    u_iter = iter(u_loader)
    # trap: GPU204 (itertools.cycle goes over the loader once and replays what it kept)
    probe_loader = DataLoader(probe_set, batch_size=64, num_workers=2, pin_memory=True)
    probes = itertools.cycle(probe_loader)
    # trap: GPU204 (a peek at one batch for the output shape: not a pass that comes back)
    sample, _ = next(iter(probe_loader))
    print(model(sample.cuda()).shape)
    for step in range(cfg.steps):
        images, labels = next(batches)
        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        try:
            weak, strong = next(u_iter)
        except StopIteration:
            u_iter = iter(u_loader)
            weak, strong = next(u_iter)
        weak, strong = weak.cuda(), strong.cuda()  # expect: GPU203, GPU203
        loss = model(images, labels, weak, strong)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 500 == 0:
            x, y = next(probes)
            accuracy = (model(x.cuda(non_blocking=True)).argmax(1) == y.cuda(non_blocking=True)).float().mean()
            print(f"step {step}: probe accuracy {accuracy:.3f}")  # expect: GPU102 info
