"""A DDP script whose epoch function a test module also calls with a loader of its own."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision.datasets import FakeData
from torchvision.transforms import ToTensor


def train_epoch(model, dataloader, optimizer, device):
    model.train()
    for x, y in dataloader:
        loss = torch.nn.functional.cross_entropy(model(x.to(device, non_blocking=True)), y.to(device, non_blocking=True))
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()


def main(args):
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", rank)
    dataset = FakeData(transform=ToTensor())
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=4, pin_memory=True, persistent_workers=True)
    model = DDP(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 224 * 224, 10)).to(device), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_epoch(model, loader, optimizer, device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    main(parser.parse_args())
