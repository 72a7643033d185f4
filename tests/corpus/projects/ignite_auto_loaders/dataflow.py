"""Loaders built by Ignite's `idist.auto_dataloader`: a DataLoader made from the keywords given,
with a DistributedSampler in distributed runs and `pin_memory` set on CUDA."""

import ignite.distributed as idist
from torch.utils.data import DataLoader, Subset


def get_dataloader(dataset, sampler=None, shuffle=False, limit=None, **kwargs):
    if limit is not None:
        dataset = Subset(dataset, range(limit))
    # workers restarted for each of the trainer's epochs in train.py
    return idist.auto_dataloader(dataset, sampler=sampler, shuffle=(sampler is None) and shuffle, **kwargs)  # expect: GPU204


def get_train_val_loaders(train_set, val_set, batch_size=32, num_workers=8):
    train_loader = get_dataloader(train_set, shuffle=True, batch_size=batch_size, num_workers=num_workers, drop_last=True)
    # trap: GPU204 (persistent workers asked for)
    val_loader = idist.auto_dataloader(val_set, batch_size=batch_size * 2, num_workers=num_workers, persistent_workers=True)
    return train_loader, val_loader


def get_finetune_loader(dataset, batch_size):
    # trap: GPU201, GPU202 (auto_dataloader pins on CUDA; no workers asked, left alone), GPU204
    return idist.auto_dataloader(dataset, batch_size=batch_size, shuffle=True, persistent_workers=False, num_workers=0)


def get_calibration_loader(dataset):
    # trap: GPU203 in train.py (not pinned: the copy blocks anyway)
    return DataLoader(dataset, batch_size=16, num_workers=2, persistent_workers=True)  # expect: GPU201
