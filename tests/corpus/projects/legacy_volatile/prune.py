"""Prunes a trained model and checks its accuracy, with volatile inputs as 0.3 wanted."""
import torch
from torch.autograd import Variable


def test(model, loader):
    model.eval()
    correct = 0
    for data, target in loader:
        data, target = Variable(data.cuda(), volatile=True), Variable(target)
        output = model(data)  # expect: GPU601 info
        pred = output.data.max(1, keepdim=True)[1]
        correct += pred.cpu().eq(target.data.view_as(pred)).sum()
    return correct


if __name__ == "__main__":
    print(test(torch.load("pruned.pth"), None))
