import torch

from openset.losses import CenterLoss


def train(model, loader, optimizer):
    criterion = CenterLoss(10, 4).cuda()
    model.cuda()
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
