"""A sweep that adjusts the shared settings in one function and trains in another."""

import torch
from torch.utils.data import DataLoader

from settings import SHARED, SWEEP_KWARGS


def configure(cores):
    SHARED.num_workers = cores
    SHARED.pin_memory = True
    SWEEP_KWARGS["num_workers"] = cores


def sweep(model, train_set, optimizer, epochs):
    loader = DataLoader(train_set, batch_size=64, num_workers=SHARED.num_workers, pin_memory=SHARED.pin_memory, persistent_workers=True)
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
            loss.backward()
            optimizer.step()

