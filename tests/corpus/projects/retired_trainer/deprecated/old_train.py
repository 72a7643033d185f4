"""The first trainer, kept for reference; nothing outside this folder names or imports it."""
import torch


def train(model, loader, optimizer, epochs):
    model.cuda()
    for epoch in range(epochs):
        for images, labels in loader:
            images = images.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    train(None, None, None, 10)
