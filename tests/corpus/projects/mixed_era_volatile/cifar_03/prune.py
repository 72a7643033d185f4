"""Prunes the CIFAR model by channel norms, then measures it, with volatile inputs as 0.3 wanted."""
import torch
from torch.autograd import Variable


def evaluate(net, test_loader):
    net.eval()
    hits = 0
    for images, labels in test_loader:
        images = Variable(images.cuda(), volatile=True)
        scores = net(images)  # expect: GPU601 info
        hits += (scores.data.max(1)[1].cpu() == labels).sum()
    return hits / len(test_loader.dataset)


if __name__ == "__main__":
    print(evaluate(torch.load("pruned.pth"), torch.load("test_loader.pth")))
