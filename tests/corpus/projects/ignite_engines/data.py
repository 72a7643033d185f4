"""Loaders for an Ignite run: train.py hands them to engines, which own the loop (no `for` over
a loader anywhere in the project)."""

from torch.utils.data import DataLoader


def build_loaders(train_set, holdout_set, batch_size):
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)  # expect: GPU201, GPU202
    # trap: GPU202 (only the evaluator runs it, whatever its name)
    holdout = DataLoader(holdout_set, batch_size=batch_size * 4)  # expect: GPU201
    return train_loader, holdout


def build_pretrain_loader(dataset, batch_size):
    # workers restarted for each of the engine's epochs in train.py
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=6, pin_memory=True)  # expect: GPU204


def build_probe_loader(dataset):
    # trap: GPU201, GPU202, GPU204 (run once, on the CPU)
    return DataLoader(dataset, batch_size=32, num_workers=2)
