"""A one-off investigation of the loss, set aside in a folder named as a graveyard."""
import torch


def investigate(model, loader, optimizer):
    model.cuda()
    for images, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    investigate(None, None, None)
