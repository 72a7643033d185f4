import torch
import torch.nn as nn

from sync_batchnorm import DataParallelWithCallback, ParallelCriterion, PlainStateParallel

torch.set_float32_matmul_precision("high")


def train(loader, epochs):
    model = nn.Sequential(nn.Linear(16, 16), nn.BatchNorm1d(16)).cuda()
    model = DataParallelWithCallback(model, device_ids=[0, 1])  # expect: GPU505
    criterion = nn.MSELoss()
    criterion = ParallelCriterion(criterion)  # part of the same choice: reported at the model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = criterion(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        torch.save({"epoch": epoch, "model": model.state_dict()}, "last.pt")  # expect: GPU503


def train_plain(loader, epochs):
    # Its wrapper saves the inner model's keys: nothing to fix.
    model = PlainStateParallel(nn.Linear(16, 16).cuda(), device_ids=[0, 1])  # expect: GPU505
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        torch.save(model.state_dict(), "plain.pt")
