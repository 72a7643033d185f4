import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision.datasets import ImageFolder
from torchvision.transforms import ToTensor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/train")
    parser.add_argument("--workers", "-j", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(10)).cuda())
    dataset = ImageFolder(args.data, transform=ToTensor())
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler, num_workers=args.workers, pin_memory=True,
                        persistent_workers=args.workers > 0)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(loader):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y) / args.gradient_accumulation_steps
            loss.backward()  # expect: GPU506 info
            if (step + 1) % args.gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    main()
