"""A trainer that wraps its model in DDP only when told the world is larger than one process;
the one script of the project never tells it, so every run is a single process."""

import torch


class Trainer:
    def __init__(self, model, optimizer, local_rank=0, world_size=1, workspace="runs"):
        self.local_rank = local_rank
        self.world_size = world_size
        self.workspace = workspace
        model = model.cuda()
        if self.world_size > 1:
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
        self.model = model
        self.optimizer = optimizer

    def save_checkpoint(self, best=False):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        if best:
            torch.save(state, f"{self.workspace}/best.pth")
        else:
            torch.save(state, f"{self.workspace}/last.pth")

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.save_checkpoint()
            self.save_checkpoint(best=True)
