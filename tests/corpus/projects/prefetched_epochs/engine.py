import torch

from datasets.data_prefetcher import data_prefetcher


def train_one_epoch(model, criterion, data_loader, optimizer, device):
    model.train()
    prefetcher = data_prefetcher(data_loader, device, prefetch=True)
    samples, targets = prefetcher.next()
    for _ in range(len(data_loader)):
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        samples, targets = prefetcher.next()
