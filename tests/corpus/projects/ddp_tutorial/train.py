"""A small DDP trainer with snapshots: datasets from toydata.py, loaders built by helpers."""
import io
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from toydata import CachedFeatures, ImageList, SyntheticRegression, Shards, TokenisedLines


class SnapshotTrainer:
    def __init__(self, model, batches, optimizer, rank, snapshot_interval, checkpoint_file):
        self.rank = rank
        self.model = DDP(model.to(rank), device_ids=[rank])
        self.batches = batches
        self.optimizer = optimizer
        self.snapshot_interval = snapshot_interval
        self.checkpoint_file = checkpoint_file

    def _step(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        if not math.isfinite(loss.detach().float().cpu()):  # expect: GPU103
            print(f"[rank {self.rank}] loss is {loss}, stopping")
            sys.exit(1)
        loss.backward()  # expect: GPU305 info
        self.optimizer.step()

    def _one_pass(self, epoch):
        self.batches.sampler.set_epoch(epoch)
        for source, targets in self.batches:
            source = source.to(self.rank, non_blocking=True)
            targets = targets.to(self.rank, non_blocking=True)
            self._step(source, targets)

    def _to_bytes(self, snapshot):
        buffer = io.BytesIO()
        torch.save(snapshot, buffer)
        return buffer.getvalue()

    def _store(self, snapshot):
        with open(self.checkpoint_file, "wb") as f:
            f.write(self._to_bytes(snapshot))

    def _snapshot(self, epoch):
        self._store({"model": self.model.module.state_dict(), "epoch": epoch})

    def train(self, epochs):
        for epoch in range(epochs):
            self._one_pass(epoch)
            if self.rank == 0 and epoch % self.snapshot_interval == 0:
                self._snapshot(epoch)


def regression_loader(dataset: Dataset, batch_size: int):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, shuffle=False, sampler=DistributedSampler(dataset))


def image_loader(dataset: Dataset, batch_size: int):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, sampler=DistributedSampler(dataset))  # expect: GPU202


def build_objects(kind):
    if kind == "toy":
        train_set = SyntheticRegression(2048)
    else:
        train_set = CachedFeatures(os.environ["FEATURES"])
    model = torch.nn.Linear(20, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return train_set, model, optimizer


def main(snapshot_interval, epochs, batch_size, kind, tokenizer):
    init_process_group(backend="nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dataset, model, optimizer = build_objects(kind)
    batches = regression_loader(dataset, batch_size)
    trainer = SnapshotTrainer(model, batches, optimizer, rank, snapshot_interval, "regression.ckpt")
    trainer.train(epochs)

    images = image_loader(ImageList("train.json"), batch_size)
    SnapshotTrainer(model, images, optimizer, rank, snapshot_interval, "images.ckpt").train(epochs)
    corpus = TokenisedLines(open("corpus.txt"), tokenizer)
    lines = DataLoader(corpus, batch_size=batch_size, pin_memory=True, sampler=DistributedSampler(corpus))  # expect: GPU202
    SnapshotTrainer(model, lines, optimizer, rank, snapshot_interval, "lines.ckpt").train(epochs)
    shard_set = Shards(np.load("shards.npy", mmap_mode="r"))
    shards = DataLoader(shard_set, batch_size=batch_size, pin_memory=True, sampler=DistributedSampler(shard_set))  # expect: GPU202
    SnapshotTrainer(model, shards, optimizer, rank, snapshot_interval, "shards.ckpt").train(epochs)
    destroy_process_group()
