"""A sibling sub-project with no pin of its own: the other README's install line is not its."""
import torch


def train(model, loader, optimizer):
    for images, labels in loader:
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):  # expect: GPU303
            loss = model(images.cuda(non_blocking=True), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
