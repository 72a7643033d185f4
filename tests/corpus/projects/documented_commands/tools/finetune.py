import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler
from torchvision.datasets import ImageFolder
from torchvision.transforms import ToTensor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/train")
    parser.add_argument("--workers", "-j", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(10)).cuda()
    dataset = ImageFolder(args.data, transform=ToTensor())
    # The documented command leaves the workers at their default: batches load in this process.
    # No documented command starts this script through a distributed launcher: the local rank
    # stays -1 and the distributed sampler is never built.
    sampler = RandomSampler(dataset) if args.local_rank == -1 else DistributedSampler(dataset)  # expect: GPU501 info
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=args.workers, pin_memory=True)  # expect: GPU202
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
