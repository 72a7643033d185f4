"""Launch: the epoch loop hands the training sampler to the shared train pass, which reshuffles."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from utils.train_utils import evaluate, train


def main(epochs=5):
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    train_set = TensorDataset(torch.randn(1024, 16), torch.randint(0, 3, (1024,)))
    val_set = TensorDataset(torch.randn(256, 16), torch.randint(0, 3, (256,)))
    train_sampler = DistributedSampler(train_set, shuffle=True)
    val_sampler = DistributedSampler(val_set)
    loader_args = {"batch_size": 32, "pin_memory": True}
    train_loader = DataLoader(train_set, sampler=train_sampler, **loader_args)
    val_loader = DataLoader(val_set, sampler=val_sampler, **loader_args)
    model = DDP(torch.nn.Linear(16, 3).to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        train(model, train_loader, optimizer, epoch, rank, sampler=train_sampler)
        evaluate(model, val_loader, rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
