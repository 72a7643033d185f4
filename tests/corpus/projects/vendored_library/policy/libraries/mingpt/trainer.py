"""A copied library's trainer: the project uses only its config class."""
import torch


class TrainerConfig:
    def __init__(self, max_epochs=10, batch_size=64):
        self.max_epochs = max_epochs
        self.batch_size = batch_size


class Trainer:
    def __init__(self, model, dataset, config):
        self.model, self.dataset, self.config = model, dataset, config

    def train(self):
        loader = torch.utils.data.DataLoader(self.dataset, batch_size=self.config.batch_size)  # expect: GPU201 info, GPU202 info
        optimizer = torch.optim.AdamW(self.model.parameters())
        for epoch in range(self.config.max_epochs):
            for x, y in loader:
                loss = self.model(x.cuda(), y.cuda())
                loss.backward()
                optimizer.step()
                print(loss.item())  # expect: GPU101 info
