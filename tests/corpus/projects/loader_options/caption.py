"""Caption fine-tuning: batches go through the logger's generator."""

import torch
from torch.utils.data import DataLoader

from utils.datasets import create_loaders
from utils.logging import MetricLogger


def train(model, data_loader, optimizer, device):
    model.train()
    logger = MetricLogger()
    for image, caption in logger.log_every(data_loader, 50, "train"):
        image = image.to(device)  # expect: GPU203
        loss = model(image, caption)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def score(model, data_loader, device):
    # Handed a loader that does not pin: its copies cannot overlap anyway.
    model.eval()
    logger = MetricLogger()
    for image, _ in logger.log_every(data_loader, 10, "score"):
        model(image.to(device))


def main(model, datasets, score_set, device="cuda"):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    train_loader, val_loader = create_loaders(datasets, [32, 64], [4, 4])
    score_loader = DataLoader(score_set, batch_size=64)  # expect: GPU201, GPU202
    for epoch in range(3):
        train(model, train_loader, optimizer, device)
    score(model, score_loader, device)
