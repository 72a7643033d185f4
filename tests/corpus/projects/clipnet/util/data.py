"""Data loading of a repository that imports itself by its own name (`clipnet.util.data`)."""

from torch.utils.data import DataLoader


def make_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=8, pin_memory=True)  # expect: GPU204
