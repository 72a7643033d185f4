"""The project's own script beside it: its relative import resolves."""
import torch

from .metrics import accuracy


def train(model, loader, optimizer, epochs):
    model = model.cuda()
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(accuracy(epoch), loss.item())  # expect: GPU101
