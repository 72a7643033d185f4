"""A trainer that saves only when it was given a path: only rank 0 is given one."""
import os

import torch
import torch.nn as nn


class Trainer:
    def __init__(self, network, save_path=None, local_rank=0):
        self.network = nn.parallel.DistributedDataParallel(network.cuda(), device_ids=[local_rank])
        self.save_path = save_path
        self.optimizer = torch.optim.AdamW(self.network.parameters())

    def step(self, images, masks):
        loss = nn.functional.binary_cross_entropy_with_logits(self.network(images.cuda()), masks.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def fit(self, loader, save_every):
        for it, (images, masks) in enumerate(loader):
            self.step(images, masks)
            if it % save_every == 0:
                self.save_network(it)

    def save_network(self, it):
        if self.save_path is None:
            print("saving is disabled on this process")
            return
        os.makedirs(os.path.dirname(self.save_path), exist_ok=True)
        torch.save(self.network.module.state_dict(), f"{self.save_path}_{it}.pth")
