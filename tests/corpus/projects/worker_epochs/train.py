"""Builds the loader on a DistributedSampler and runs the steps through the worker."""
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from worker import Worker


def run(dataset, dis, cfg, rank):
    sampler = DistributedSampler(dataset, num_replicas=cfg.world_size, rank=rank, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=sampler, num_workers=4, pin_memory=True,
                        drop_last=True, persistent_workers=True)
    dis = torch.nn.parallel.DistributedDataParallel(dis.cuda(rank), device_ids=[rank])
    optimizer = torch.optim.Adam(dis.parameters(), lr=2e-4)
    worker = Worker(train_loader=loader, dis=dis, optimizer=optimizer, distributed=True)
    worker.prepare_train_iter(epoch=0)
    step = 0
    while step <= cfg.total_steps:
        worker.train_discriminator(step)
        step += 1
