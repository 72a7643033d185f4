"""Entry point: loaders from the command line, then one pass of each per epoch."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from loops import fit_one_epoch, score


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=100)
    return parser.parse_args()


def main():
    args = parse()
    device = torch.device("cuda")
    train_set = TensorDataset(torch.randn(2048, 3, 8, 8), torch.randint(0, 10, (2048,)))
    test_set = TensorDataset(torch.randn(512, 3, 8, 8), torch.randint(0, 10, (512,)))
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=args.workers, pin_memory=True)  # expect: GPU204
    test_loader = DataLoader(test_set, batch_size=128, num_workers=args.workers, pin_memory=True)
    kept_loader = DataLoader(train_set, batch_size=64, num_workers=args.workers, pin_memory=True, persistent_workers=True)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(192, 10)).to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        fit_one_epoch(net, train_loader, opt, device, epoch)
    for epoch in range(args.epochs):
        fit_one_epoch(net, kept_loader, opt, device, epoch)
    print(score(net, test_loader, device))


if __name__ == "__main__":
    main()
