"""Prunes the ImageNet model; its evaluation kept the volatile inputs of the older experiments."""
import torch
from torch.autograd import Variable


def evaluate(net, test_loader):
    net.eval()
    hits = 0
    for images, labels in test_loader:
        images = Variable(images.cuda(), volatile=True)
        scores = net(images)  # expect: GPU601
        hits += (scores.data.max(1)[1].cpu() == labels).sum()
    return hits / len(test_loader.dataset)


if __name__ == "__main__":
    print(evaluate(torch.load("pruned.pth"), torch.load("test_loader.pth")))
