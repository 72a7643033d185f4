"""A DDP trainer: the last checkpoint is saved on rank 0 only; the best one on every rank."""

import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model, optimizer, local_rank):
        dist.init_process_group("nccl")
        self.local_rank = local_rank
        self.model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[local_rank])
        self.optimizer = optimizer

    def save_checkpoint(self, full=False, best=False):
        state = {"model": self.model.module.state_dict()}
        if full:
            state["optimizer"] = self.optimizer.state_dict()
        if not best:
            # Reached only by the call made under `if self.local_rank == 0:`.
            torch.save(state, "last.pth")
        else:
            torch.save(state, "best.pth")  # expect: GPU504

    def train(self, loader, epochs):
        for epoch in range(epochs):
            loader.sampler.set_epoch(epoch)
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if self.local_rank == 0:
                self.save_checkpoint(full=True, best=False)
            self.save_checkpoint(full=False, best=True)
