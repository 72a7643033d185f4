"""The same run with a sampler that draws from the whole dataset on every rank."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

from engine import compute_nll, train_one_epoch


def main():
    dist.init_process_group(backend="nccl")
    device = torch.device(f"cuda:{dist.get_rank()}")
    features, targets = torch.randn(4096, 32), torch.randint(0, 10, (4096,))
    train_set = TensorDataset(features, targets)
    val_set = TensorDataset(features[:512], targets[:512])
    loader_train = DataLoader(  # expect: GPU502
        train_set, sampler=RandomSampler(train_set), batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True
    )
    loader_val = DataLoader(val_set, shuffle=True, batch_size=128, num_workers=4, pin_memory=True)
    model = DistributedDataParallel(torch.nn.Linear(32, 10).to(device), device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    print(compute_nll(model, loader_val, device))
    for epoch in range(100):
        train_one_epoch(model, loader_train, optimizer, device, epoch)


if __name__ == "__main__":
    main()
