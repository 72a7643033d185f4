"""Mixed-precision training with the AMP entry points of the torch release the project pins."""
import torch


def train(model, loader, optimizer):
    scaler = torch.cuda.amp.GradScaler()  # expect: GPU303
    for images, labels in loader:
        with torch.cuda.amp.autocast():  # expect: GPU303
            loss = torch.nn.functional.cross_entropy(model(images.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
