import torch

from utils.loss import ComputeLoss
from utils.loss_dual import ComputeLoss as DualLoss
from utils.loss_triple import ComputeLoss as TripleLoss


def train(model, loader, optimizer, dual=False):
    criterion = DualLoss() if dual else ComputeLoss()
    model.cuda()
    for x, y, label in loader:
        x, y, label = x.cuda(), y.cuda(), label.cuda()
        loss = criterion(model(x), y, label) if dual else criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    train(None, None, None)
    TripleLoss()
