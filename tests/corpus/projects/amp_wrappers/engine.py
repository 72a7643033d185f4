"""One epoch of training; the loss goes to whatever backward helper the caller hands in."""

import torch


def train_epoch(model, loader, optimizer, criterion, device, backward_fn, accum=1):
    model.train()
    for step, (images, labels) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        with torch.amp.autocast("cuda"):
            loss = criterion(model(images), labels)
        loss = loss / accum
        backward_fn(loss, optimizer, params=model.parameters(), step=(step + 1) % accum == 0)
        if (step + 1) % accum == 0:
            optimizer.zero_grad()


def train_epoch_plain(model, loader, optimizer, criterion, device, stepper):
    model.train()
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        with torch.amp.autocast("cuda"):  # expect: GPU301
            loss = criterion(model(images), labels)
        stepper(loss, optimizer)
        optimizer.zero_grad()
