import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def get_loader(dataset, batch_size, is_distributed):
    sampler = DistributedSampler(dataset, shuffle=True) if is_distributed else None
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, shuffle=sampler is None,
                      num_workers=4, pin_memory=True, persistent_workers=True)
