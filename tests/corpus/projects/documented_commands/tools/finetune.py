import argparse

import torch
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder
from torchvision.transforms import ToTensor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/train")
    parser.add_argument("--workers", "-j", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(10)).cuda()
    dataset = ImageFolder(args.data, transform=ToTensor())
    # The documented command leaves the workers at their default: batches load in this process.
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=args.workers, pin_memory=True)  # expect: GPU202
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
