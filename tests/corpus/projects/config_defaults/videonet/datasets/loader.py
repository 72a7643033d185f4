"""Loaders built from the run's config node, handed in by the caller."""

import torch
from torch.utils.data import DataLoader, DistributedSampler


def construct_loader(cfg, dataset, split):
    if split == "train":
        shuffle, drop_last = True, True
    else:
        shuffle, drop_last = False, False
    if cfg.NUM_GPUS > 1:
        sampler = DistributedSampler(dataset, shuffle=shuffle)  # expect: GPU501
        loader = DataLoader(  # expect: GPU204
            dataset,
            batch_size=cfg.TRAIN.BATCH_SIZE,
            sampler=sampler,
            num_workers=cfg.DATA_LOADER.NUM_WORKERS,
            pin_memory=cfg.DATA_LOADER.PIN_MEMORY,
            drop_last=drop_last,
        )
    elif split == "train":
        workers = cfg.DATA_LOADER.NUM_WORKERS
        loader = DataLoader(dataset, cfg.TRAIN.BATCH_SIZE, shuffle, None, None, workers, None, cfg.DATA_LOADER.PIN_MEMORY, drop_last)  # expect: GPU204
    else:
        loader = DataLoader(  # expect: GPU204
            dataset,
            batch_size=cfg.TRAIN.BATCH_SIZE,
            num_workers=cfg.DATA_LOADER.NUM_WORKERS,
            pin_memory=cfg.DATA_LOADER.PIN_MEMORY,
        )
    return loader


def construct_prefetch_loader(cfg, dataset):
    # Its settings are worked out at run time (`assert_and_infer_cfg`): no claim either way.
    return DataLoader(
        dataset,
        batch_size=cfg.TRAIN.BATCH_SIZE,
        num_workers=cfg.PREFETCH.WORKERS,
        pin_memory=cfg.PREFETCH.PIN_MEMORY,
    )


def construct_flat_loader(cfg, dataset):
    # A top-level setting in yacs' upper case is read as a default too; the finding names it,
    # as info: the run's YAML file may turn it on.
    return DataLoader(dataset, batch_size=cfg.TRAIN.BATCH_SIZE, num_workers=2, pin_memory=cfg.PIN_ALWAYS, persistent_workers=True)  # expect: GPU201 info


def construct_test_loader(cfg, dataset):
    # Gone over once, after training: its workers start once.
    return DataLoader(dataset, batch_size=cfg.TRAIN.BATCH_SIZE, num_workers=cfg.DATA_LOADER.NUM_WORKERS, pin_memory=True)
