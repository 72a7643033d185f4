"""A trainer that wraps the model in DDP only when it is given a world size above one."""
import torch


class Trainer:
    def __init__(self, name, model, optimizer, local_rank=0, world_size=1, workspace="workspace"):
        self.name = name
        self.local_rank = local_rank
        self.world_size = world_size
        self.device = torch.device(f"cuda:{local_rank}")
        model.to(self.device)
        if self.world_size > 1:
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
        self.model = model
        self.optimizer = optimizer
        self.workspace = workspace

    def train(self, loader, epochs):
        for epoch in range(epochs):
            total = 0.0
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total += loss.item()  # expect: GPU101
            print(epoch, total)
            self.save_checkpoint(epoch)

    def save_checkpoint(self, epoch):
        state = {"epoch": epoch, "model": self.model.state_dict()}
        torch.save(state, f"{self.workspace}/{self.name}.pth")
