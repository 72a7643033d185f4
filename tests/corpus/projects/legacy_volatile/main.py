"""Trains with the PyTorch 0.3 idioms of its time."""
import torch
from torch.autograd import Variable


def train(model, loader, optimizer, epochs):
    model.cuda()
    for epoch in range(epochs):
        for data, target in loader:
            data, target = Variable(data.cuda()), Variable(target.cuda())
            loss = torch.nn.functional.cross_entropy(model(data), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.data[0])
