"""Launch with a train pass that never reshuffles: the training sampler repeats its order."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from utils.train_utils import evaluate, train_no_reshuffle


def make_sets(n_train, n_test, width=16):
    sets = [TensorDataset(torch.randn(n, width), torch.randint(0, 3, (n,))) for n in (n_train, n_test)]
    return sets[0], sets[1]


def main(epochs=5):
    dist.init_process_group(backend="nccl")
    rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(rank)
    train_set, test_set = make_sets(1024, 256)
    sampler = DistributedSampler(train_set)  # expect: GPU501
    test_sampler = DistributedSampler(test_set)  # expect: GPU501 info
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=2, pin_memory=True, persistent_workers=True)
    test_loader = DataLoader(test_set, batch_size=64, sampler=test_sampler, num_workers=2, pin_memory=True, persistent_workers=True)
    model = DDP(torch.nn.Linear(16, 3).to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        train_no_reshuffle(model, train_loader, optimizer, rank)
        evaluate(model, test_loader, rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
