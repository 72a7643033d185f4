import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def create_dataloader(train_dataset, val_dataset, batch_size):
    batches = torch.utils.data.BatchSampler(DistributedSampler(train_dataset), batch_size, drop_last=True)
    train_loader = DataLoader(train_dataset, batch_sampler=batches, num_workers=4, pin_memory=True, persistent_workers=True)
    val_loader = DataLoader(val_dataset, batch_size=batch_size, num_workers=4, pin_memory=True, persistent_workers=True)
    return train_loader, val_loader
