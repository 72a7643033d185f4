"""Trains the CIFAR model, reading its loss the 0.3 way."""
import torch
from torch.autograd import Variable


def run(net, train_loader, opt, epochs):
    net.cuda()
    for epoch in range(epochs):
        for images, labels in train_loader:
            out = net(Variable(images.cuda()))
            loss = torch.nn.functional.nll_loss(out, Variable(labels.cuda()))
            opt.zero_grad()
            loss.backward()
            opt.step()
            print("epoch %d loss %.3f" % (epoch, loss.data[0]))  # expect: GPU101
