"""A trainer class for the package's users: nothing in this project builds it, its users do."""

import torch


class Trainer:
    def __init__(self, model, loader, lr=1e-3):
        self.model = model.cuda()
        self.loader = loader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def fit(self, epochs):
        for _ in range(epochs):
            for images, labels in self.loader:
                images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
                loss = torch.nn.functional.cross_entropy(self.model(images), labels)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                print(f"loss {loss.item():.4f}")  # expect: GPU101
