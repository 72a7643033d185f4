"""A DDP tutorial trainer: datasets from toydata.py, loaders built in a helper."""
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

from toydata import CachedFeatures, ImageList, RandomRegression, Shards, TokenisedLines


class Trainer:
    def __init__(self, model, train_data, optimizer, gpu_id, save_every, snapshot_path):
        self.gpu_id = gpu_id
        self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.snapshot_path = snapshot_path

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        if not math.isfinite(loss.detach().float().cpu()):  # expect: GPU103
            print(f"[GPU{self.gpu_id}] loss is {loss}, stopping")
            sys.exit(1)
        loss.backward()  # expect: GPU305 info
        self.optimizer.step()

    def _run_epoch(self, epoch):
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            source = source.to(self.gpu_id, non_blocking=True)
            targets = targets.to(self.gpu_id, non_blocking=True)
            self._run_batch(source, targets)

    def _serialise(self, snapshot):
        buffer = io.BytesIO()
        torch.save(snapshot, buffer)
        return buffer.getvalue()

    def _upload(self, snapshot):
        with open(self.snapshot_path, "wb") as f:
            f.write(self._serialise(snapshot))

    def _save_snapshot(self, epoch):
        self._upload({"model": self.model.module.state_dict(), "epoch": epoch})

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def prepare_dataloader(dataset: Dataset, batch_size: int):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, shuffle=False, sampler=DistributedSampler(dataset))


def prepare_image_loader(dataset: Dataset, batch_size: int):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, sampler=DistributedSampler(dataset))  # expect: GPU202


def load_train_objs(kind):
    if kind == "toy":
        train_set = RandomRegression(2048)
    else:
        train_set = CachedFeatures(os.environ["FEATURES"])
    model = torch.nn.Linear(20, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return train_set, model, optimizer


def main(save_every, total_epochs, batch_size, kind, tokenizer):
    init_process_group(backend="nccl")
    gpu_id = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu_id)
    dataset, model, optimizer = load_train_objs(kind)
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer, gpu_id, save_every, "snapshot.pt")
    trainer.train(total_epochs)

    images = prepare_image_loader(ImageList("train.json"), batch_size)
    Trainer(model, images, optimizer, gpu_id, save_every, "images.pt").train(total_epochs)
    corpus = TokenisedLines(open("corpus.txt"), tokenizer)
    lines = DataLoader(corpus, batch_size=batch_size, pin_memory=True, sampler=DistributedSampler(corpus))  # expect: GPU202
    Trainer(model, lines, optimizer, gpu_id, save_every, "lines.pt").train(total_epochs)
    shard_set = Shards(np.load("shards.npy", mmap_mode="r"))
    shards = DataLoader(shard_set, batch_size=batch_size, pin_memory=True, sampler=DistributedSampler(shard_set))  # expect: GPU202
    Trainer(model, shards, optimizer, gpu_id, save_every, "shards.pt").train(total_epochs)
    destroy_process_group()
