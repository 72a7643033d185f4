"""A sub-project whose README installs torch 1.7: no `torch.autocast` to move to yet."""
import torch


def train(model, loader, optimizer):
    for images, labels in loader:
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):  # expect: GPU303 info
            loss = model(images.cuda(non_blocking=True), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
