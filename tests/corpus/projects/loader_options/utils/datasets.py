"""Dataset helpers: the loader class is picked by the caller's options."""

import torch
from torch.utils.data import DataLoader


class RepeatingDataLoader(torch.utils.data.dataloader.DataLoader):
    """One stream of batches, opened on the first pass and drawn from by every later one."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._stream = None

    def __iter__(self):
        if self._stream is None:
            self._stream = super().__iter__()
        steps = len(self.dataset) // self.batch_size
        return (next(self._stream) for _ in range(steps))


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


def create_loaders(datasets, batch_sizes, workers):
    loaders = []
    for dataset, batch_size, n_worker in zip(datasets, batch_sizes, workers):
        loader = DataLoader(dataset, batch_size=batch_size, num_workers=n_worker, pin_memory=True)
        loaders.append(loader)
    return loaders


def create_mixed_loaders(datasets, extra):
    loaders = []
    for dataset in datasets:
        loaders.append(DataLoader(dataset, batch_size=32, num_workers=2, pin_memory=True))
    loaders.extend(extra)  # whatever the caller hands in: not followed
    return loaders
