"""Trains the task model: `model(...)` runs the inherited `forward`."""
import torch
from vqa.net import VQANet


def train(loader):
    model = VQANet().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(10):
        for x, y in loader:
            outputs, loss = model(x.cuda(), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    train(None)
