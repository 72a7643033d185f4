"""Builds the recipe's loaders from its settings module."""
import torch
from torch.utils import data

from config import config


def get_train_loader(engine, dataset):
    train_sampler = None
    if engine.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(dataset)
    train_loader = data.DataLoader(dataset,  # expect: GPU204
                                   batch_size=config.batch_size,
                                   num_workers=config.num_workers,
                                   drop_last=True,
                                   pin_memory=True,
                                   sampler=train_sampler)
    return train_loader, train_sampler


def get_eval_loader(dataset):
    # No workers in this recipe's settings: nothing restarts.
    return data.DataLoader(dataset, batch_size=1, num_workers=config.eval_workers, pin_memory=True)
