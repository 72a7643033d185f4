import torch

from ..losses import LOSSES


class Trainer:
    def __init__(self, cfg, model, loader):
        self.device = torch.device("cuda")
        self.model = model.to(self.device)
        self.loader = loader
        self.criterion = LOSSES.from_dict(cfg["loss"])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg["lr"])

    def run(self, epochs):
        for epoch in range(epochs):
            for inputs, targets in self.loader:
                inputs = inputs.to(self.device, non_blocking=True)
                targets = targets.to(self.device, non_blocking=True)
                self.optimizer.zero_grad()
                loss = self.criterion(inputs, targets, self.model)
                loss.backward()
                self.optimizer.step()
