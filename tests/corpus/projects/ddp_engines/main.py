"""DDP entry point: the training loader is split between ranks; the loss-measuring loader
is shuffled on every rank, which only costs a repeated evaluation."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine import compute_nll, train_one_epoch


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", rank)
    train_set = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    val_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 10, (512,)))
    sampler_train = DistributedSampler(train_set, shuffle=True)
    loader_train = DataLoader(
        train_set, sampler=sampler_train, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True
    )
    loader_val = DataLoader(val_set, shuffle=True, batch_size=128, num_workers=4, pin_memory=True, persistent_workers=True)
    model = DistributedDataParallel(torch.nn.Linear(32, 10).to(device), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    print(compute_nll(model, loader_val, device))
    for epoch in range(100):
        sampler_train.set_epoch(epoch)
        train_one_epoch(model, loader_train, optimizer, device, epoch)
        probe = next(iter(loader_val))[0].to(device, non_blocking=True)
        print(model(probe).std())


if __name__ == "__main__":
    main()
