"""Dataset helpers: the loader class is picked by the caller's options."""

import torch
from torch.utils.data import DataLoader


class RepeatingDataLoader(torch.utils.data.dataloader.DataLoader):
    """Keeps its workers: the batch sampler never runs out."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.iterator = super().__iter__()

    def __len__(self):
        return len(self.batch_sampler.sampler)

    def __iter__(self):
        for _ in range(len(self)):
            yield next(self.iterator)


class PageableLoader(DataLoader):
    """Never pins, whatever it is asked."""

    def __init__(self, dataset, **kwargs):
        kwargs["pin_memory"] = False
        super().__init__(dataset, **kwargs)


def create_dataloader(dataset, batch_size, workers, weighted=False):
    loader = DataLoader if weighted else RepeatingDataLoader
    dataloader = loader(dataset, batch_size=batch_size, num_workers=workers, pin_memory=True)
    return dataloader, dataset


def create_pageable_loader(dataset, batch_size):
    return PageableLoader(dataset, batch_size=batch_size, num_workers=2, pin_memory=True)
