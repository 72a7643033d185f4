"""Time-series classifier with PyTorch Lightning: LightningModule + LightningDataModule + Trainer.

Lightning owns the loop, device placement, mixed precision and the sampler epochs,
so none of the hand-written-loop advice applies to this file.
"""
import argparse

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint
from torch.utils.data import DataLoader, Dataset, random_split
from torch.utils.data.distributed import DistributedSampler


class SeriesDataset(Dataset):
    def __init__(self, n_series=20_000, length=256, n_channels=6, num_classes=5, seed=0):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, num_classes, size=n_series)
        t = np.linspace(0, 1, length, dtype=np.float32)
        freqs = 1.0 + self.labels[:, None, None] * 2.0
        noise = rng.normal(scale=0.3, size=(n_series, n_channels, length)).astype(np.float32)
        self.x = (np.sin(2 * np.pi * freqs * t) + noise).astype(np.float32)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i]), int(self.labels[i])  # trap: GPU101


class SeriesDataModule(pl.LightningDataModule):
    def __init__(self, batch_size=128, num_workers=4, use_dist_sampler=False):
        super().__init__()
        self.save_hyperparameters()
        self.batch_size = batch_size
        self.num_workers = num_workers

    def setup(self, stage=None):
        full = SeriesDataset()
        n_val = len(full) // 10
        self.train_set, self.val_set = random_split(full, [len(full) - n_val, n_val])

    def train_dataloader(self):
        sampler = None
        if self.hparams.use_dist_sampler:
            sampler = DistributedSampler(self.train_set)  # trap: GPU501
        return DataLoader(  # trap: GPU201
            self.train_set,
            batch_size=self.batch_size,
            shuffle=sampler is None,
            sampler=sampler,
            num_workers=self.num_workers,
        )

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size * 2, num_workers=self.num_workers)  # trap: GPU201


class SeriesClassifier(pl.LightningModule):
    def __init__(self, n_channels=6, hidden=128, num_classes=5, lr=3e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.GRU(n_channels, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, num_classes)
        self.val_preds = []

    def forward(self, x):
        out, _ = self.encoder(x.transpose(1, 2))
        return self.head(out[:, -1])

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log("train_loss", loss, prog_bar=True)  # trap: GPU102
        self.log("train_acc", acc, on_step=False, on_epoch=True)  # trap: GPU102
        self.log("lr", self.optimizers().param_groups[0]["lr"])
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.val_preds.append(logits.argmax(dim=1).cpu())  # trap: GPU103
        self.log("val_loss", loss, sync_dist=True, prog_bar=True)  # trap: GPU102
        self.log("val_acc", (logits.argmax(dim=1) == y).float().mean(), sync_dist=True)

    def on_validation_epoch_end(self):
        preds = torch.cat(self.val_preds)
        counts = torch.bincount(preds, minlength=self.hparams.num_classes)
        self.print(f"val prediction histogram: {counts.tolist()}")  # trap: GPU102, GPU103
        self.val_preds.clear()

    def on_train_epoch_end(self):
        metrics = self.trainer.callback_metrics
        if "train_loss" in metrics:
            print(f"epoch {self.current_epoch} train_loss {metrics['train_loss']:.4f}")  # trap: GPU102
            print(float(metrics["train_loss"]))  # trap: GPU101

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-2)
        sched = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=self.hparams.lr, total_steps=self.trainer.estimated_stepping_batches
        )
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--devices", type=int, default=4)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=128)
    args = p.parse_args()

    pl.seed_everything(42)
    dm = SeriesDataModule(batch_size=args.batch_size, use_dist_sampler=args.devices > 1)
    model = SeriesClassifier()
    trainer = pl.Trainer(  # trap: GPU301
        accelerator="gpu",
        devices=args.devices,
        strategy="ddp",
        precision="16-mixed",
        max_epochs=args.epochs,
        use_distributed_sampler=False,
        callbacks=[ModelCheckpoint(monitor="val_acc", mode="max"), LearningRateMonitor("step")],
        log_every_n_steps=25,
    )
    trainer.fit(model, datamodule=dm)
    if trainer.is_global_zero:
        torch.save(model.encoder.state_dict(), "encoder.pt")  # trap: GPU503
        torch.save(model.state_dict(), "classifier.pt")  # trap: GPU503


if __name__ == "__main__":
    main()
