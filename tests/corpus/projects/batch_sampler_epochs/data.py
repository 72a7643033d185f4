import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def create_dataloader(train_dataset, val_dataset, batch_size):
    if dist.is_available() and dist.is_initialized():
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)  # expect: GPU501
        val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset)  # expect: GPU501 info
    else:
        train_sampler = torch.utils.data.sampler.RandomSampler(train_dataset)
        val_sampler = torch.utils.data.sampler.SequentialSampler(val_dataset)
    train_batches = torch.utils.data.sampler.BatchSampler(train_sampler, batch_size=batch_size, drop_last=True)
    val_batches = torch.utils.data.sampler.BatchSampler(val_sampler, batch_size=batch_size, drop_last=False)
    train_loader = DataLoader(
        train_dataset, batch_sampler=train_batches, num_workers=4, pin_memory=True, persistent_workers=True
    )
    val_loader = DataLoader(val_dataset, batch_sampler=val_batches, num_workers=4, pin_memory=True, persistent_workers=True)
    return train_loader, val_loader
