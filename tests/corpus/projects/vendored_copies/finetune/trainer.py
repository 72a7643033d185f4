"""A library's training loop copied in whole: its relative imports name modules this folder
lacks, so nothing can import it."""
import torch

from .trainer_utils import seed_everything
from .metrics import accuracy


def train(model, loader, optimizer, epochs):
    seed_everything(0)
    model = model.cuda()
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(accuracy(epoch), loss.item())  # expect: GPU101 info
