"""Datasets and loaders for the detector (built here, consumed by train.py)."""

import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class BoxDataset(Dataset):
    def __init__(self, root, train=True):
        self.items = sorted(root.glob("*.pt"))
        self.train = train

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        sample = torch.load(self.items[index])
        return sample["image"], sample["boxes"]


def build_loaders(cfg, rank, world_size):
    train_set = BoxDataset(cfg.root / "train")
    val_set = BoxDataset(cfg.root / "val", train=False)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)  # expect: GPU501
    train_loader = DataLoader(  # expect: GPU201
        train_set,
        batch_size=cfg.batch_size,
        sampler=sampler,
        num_workers=cfg.workers,
        persistent_workers=True,
    )
    # trap: GPU201 (pinned already)
    val_loader = DataLoader(val_set, batch_size=cfg.batch_size, num_workers=cfg.workers, pin_memory=True)
    return train_loader, val_loader, sampler
