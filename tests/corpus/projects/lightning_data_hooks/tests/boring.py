"""A data module the tests train on: tiny random data, not a training run."""
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class RandomDataModule(pl.LightningDataModule):
    def train_dataloader(self):
        return DataLoader(TensorDataset(torch.randn(64, 32)), batch_size=8, num_workers=2)
