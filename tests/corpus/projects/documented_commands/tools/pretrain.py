import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler
from torchvision.datasets import ImageFolder
from torchvision.transforms import ToTensor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/train")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    if args.local_rank != -1:
        torch.distributed.init_process_group("nccl")
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(10)).cuda()
    dataset = ImageFolder(args.data, transform=ToTensor())
    # The README starts this script through a distributed launcher: the sampler is used.
    sampler = RandomSampler(dataset) if args.local_rank == -1 else DistributedSampler(dataset)  # expect: GPU501
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=4, pin_memory=True, persistent_workers=True)
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
