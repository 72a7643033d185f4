"""Data modules a Lightning Trainer trains from: it goes over `train_dataloader()`'s loader once
per epoch and copies each batch to the GPU, though no loop of the project does either."""
from functools import partial

import pytorch_lightning as pl
import webdataset as wds
from torch.utils.data import DataLoader

from data.folders import PairFolder


class FolderModule(pl.LightningDataModule):
    def __init__(self, batch_size, root="pairs"):
        super().__init__()
        self.batch_size = batch_size
        self.root = root

    def train_dataloader(self):
        return DataLoader(PairFolder(self.root), batch_size=self.batch_size, shuffle=True, num_workers=4)  # expect: GPU201, GPU204

    def val_dataloader(self):
        # Validation runs once per epoch: not a per-step cost.
        return DataLoader(PairFolder(self.root, split="val"), batch_size=self.batch_size, num_workers=4)


class ConfiguredModule(pl.LightningDataModule):
    """latent-diffusion's shape: the hooks are bound in `__init__` to the splits the config gives."""

    def __init__(self, batch_size, train=None, validation=None):
        super().__init__()
        self.batch_size = batch_size
        if train is not None:
            self.train_dataloader = self._train_dataloader
        if validation is not None:
            self.val_dataloader = partial(self._val_dataloader, shuffle=False)

    def _train_dataloader(self):
        loader = DataLoader(PairFolder("pairs"), batch_size=self.batch_size, shuffle=True, num_workers=8)  # expect: GPU201, GPU204
        return loader

    def _val_dataloader(self, shuffle=False):
        return DataLoader(PairFolder("pairs", split="val"), batch_size=self.batch_size, shuffle=shuffle)


class ShardModule(pl.LightningDataModule):
    def __init__(self, urls, batch_size):
        super().__init__()
        self.urls = urls
        self.batch_size = batch_size

    def train_dataloader(self):
        # webdataset's WebLoader builds a DataLoader from the same arguments.
        return wds.WebLoader(wds.WebDataset(self.urls), batch_size=self.batch_size, num_workers=6)  # expect: GPU201, GPU204


class TunedModule(pl.LightningDataModule):
    def __init__(self, batch_size):
        super().__init__()
        self.batch_size = batch_size

    def train_dataloader(self):
        return DataLoader(PairFolder("pairs"), batch_size=self.batch_size, shuffle=True, num_workers=8,
                          pin_memory=True, persistent_workers=True)


class Splits:
    """Not a Lightning class: nothing calls its hook-named method, so nothing draws from it."""

    def train_dataloader(self):
        return DataLoader(PairFolder("pairs"), batch_size=4, num_workers=2)
