"""The passes over a loader: one that trains, one that only measures the loss."""

import torch


def log_every(iterable, every):
    # Prints a heartbeat now and then; every pass of the project goes through it.
    for i, item in enumerate(iterable):
        if i % every == 0:
            print(f"batch {i}")
        yield item


def train_one_epoch(model, loader, optimizer, device, epoch):
    model.train()
    for samples, labels in log_every(loader, 50):
        samples = samples.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(samples), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def compute_nll(model, loader, device, repeats=4):
    # Averages a few forward passes per batch; nothing here trains.
    model.eval()
    total = torch.zeros((), device=device)
    for samples, labels in log_every(loader, 50):
        samples = samples.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        for _ in range(repeats):
            with torch.no_grad():
                total += torch.nn.functional.cross_entropy(model(samples), labels)
    return total
