"""Empirical risk minimisation: a fixed number of steps per epoch, each drawing a batch from an
endless iterator over the training loader."""

import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision.datasets import FakeData

from tlkit.data import CudaPrefetcher, ForeverIterator

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def main(args):
    train_loader = DataLoader(FakeData(), batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)  # expect: GPU201
    source_loader = DataLoader(FakeData(), batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True)
    # trap: GPU201 (this iterator moves each batch itself, with non_blocking copies from pinned memory)
    target_loader = DataLoader(FakeData(), batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True)
    train_iter = ForeverIterator(train_loader)
    source_iter = ForeverIterator(source_loader)
    target_iter = ForeverIterator(target_loader, device)
    model = torch.nn.Linear(10, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        train(train_iter, source_iter, target_iter, model, optimizer, args)


def train(train_iter: ForeverIterator, source_iter, target_iter, model, optimizer, args):
    model.train()
    for i in range(args.iters_per_epoch):
        x, y = next(train_iter)
        x = x.to(device)
        y = y.to(device)
        x_s, _ = next(source_iter)
        x_s = x_s.to(device)  # expect: GPU203
        # trap: GPU203 (already on the GPU: the iterator was built with the device)
        x_t, _ = next(target_iter)
        x_t = x_t.to(device)
        loss = F.cross_entropy(model(x), y) + model(x_s).mean() + model(x_t).mean()
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()


def warm_up(model, dataset, steps):
    # trap: GPU201 (the prefetcher copies on its own; these batches are device tensors already)
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
    batches = CudaPrefetcher(loader)
    for _ in range(steps):
        x, y = next(batches)
        x = x.to(device)
        model(x).sum().backward()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--iters-per-epoch", type=int, default=100)
    main(parser.parse_args())
