"""Training and evaluation passes; which classes they run is known only from the entry script."""
import torch


def train_one_epoch(model, criterion, loader, optimizer, device):
    model.train()
    for samples, targets in loader:
        samples = samples.to(device)  # expect: GPU203
        targets = targets.to(device)  # expect: GPU203
        outputs = model(samples)
        loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, postprocessors, loader, device):
    model.eval()
    results = []
    for samples, _ in loader:
        outputs = model(samples.to(device, non_blocking=True))
        results.append(postprocessors["bbox"](outputs))
    return results
