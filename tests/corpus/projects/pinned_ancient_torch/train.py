"""A tracker trained on torch 1.7, which has `torch.cuda.amp` but no `torch.autocast` yet (a conda environment pins it)."""
import torch


def train(model, loader, optimizer, use_amp):
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)  # expect: GPU303 info
    for images, labels in loader:
        with torch.cuda.amp.autocast(enabled=use_amp):  # expect: GPU303 info
            loss = model(images.cuda(non_blocking=True), labels.cuda(non_blocking=True))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
