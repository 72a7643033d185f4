import torch
from torch.utils.data import DataLoader

from datasets.data_prefetcher import data_prefetcher


def train_some_steps(model, criterion, prefetcher, optimizer, steps):
    for _ in range(steps):
        samples, targets = prefetcher.next()
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, criterion, dataset, sampler, epochs=10, steps=500):
    """Iteration-based: one pass over an endless sampler, drawn from by every epoch."""
    device = torch.device("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, num_workers=4, pin_memory=True)
    prefetcher = data_prefetcher(loader, device)
    for epoch in range(epochs):
        train_some_steps(model, criterion, prefetcher, optimizer, steps)
