import torch

from core.common import *


# Kept from an earlier experiment: the script that imports this module with `*` only mentions
# this function in a comment, so no run trains with it.
def train_certified(loader, model, opt, epsilon):
    model.train()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        loss = bound_loss(model, x, y, epsilon)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())  # expect: GPU101 info


def bound_loss(model, x, y, epsilon):
    return torch.nn.functional.cross_entropy(model(x + epsilon * torch.randn_like(x)), y)
