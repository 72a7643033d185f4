"""Training and evaluation passes shared by the launch scripts."""

import torch


def train(model, loader, optimizer, epoch, rank, sampler=None):
    model.train()
    if sampler is not None:
        sampler.set_epoch(epoch)
    total = torch.zeros(2, device=rank)
    for inputs, targets in loader:
        inputs, targets = inputs.to(rank), targets.to(rank)  # expect: GPU203, GPU203
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total[0] += loss.detach()
        total[1] += 1
    return total


def train_no_reshuffle(model, loader, optimizer, rank):
    model.train()
    for inputs, targets in loader:
        inputs, targets = inputs.to(rank, non_blocking=True), targets.to(rank, non_blocking=True)
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader, rank):
    model.eval()
    correct = torch.zeros(1, device=rank)
    for inputs, targets in loader:
        inputs, targets = inputs.to(rank, non_blocking=True), targets.to(rank, non_blocking=True)
        correct += (model(inputs).argmax(1) == targets).sum()
    return correct
