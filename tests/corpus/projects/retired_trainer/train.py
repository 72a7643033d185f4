"""The trainer the README runs; it still borrows one helper from the set-aside folder."""
import torch

from deprecated.metrics import accuracy


def train(model, loader, optimizer, epochs):
    model.cuda()
    for epoch in range(epochs):
        for images, labels in loader:
            images = images.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            out = model(images)
            loss = torch.nn.functional.cross_entropy(out, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            acc = accuracy(out, labels)
            print(epoch, acc)


if __name__ == "__main__":
    train(None, None, None, 10)
