import torch


def validate(val_loader, model, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, target in val_loader:
            images, target = images.to(device, non_blocking=True), target.to(device, non_blocking=True)
            correct += (model(images).argmax(dim=1) == target).sum()
    return correct
