"""The loaders go to `utils.validate` beside this script; the metric package it also imports
is imported by dozens of other scripts, which must not push `utils.py` out of its view."""
import torch
from torch.utils.data import DataLoader

import utils
from lib.metric import accuracy


def main(train_set, val_set, epochs=10):
    device = torch.device("cuda")
    model = torch.nn.Linear(32, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4, pin_memory=True,
                              persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=64, num_workers=4, pin_memory=True)  # expect: GPU204
    for epoch in range(epochs):
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y) + 0 * accuracy(out, y)
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()
        print(utils.validate(val_loader, model, device))
