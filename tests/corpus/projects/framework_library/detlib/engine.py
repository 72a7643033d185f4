import torch

from detlib import modeling  # noqa: F401  (registers the architectures)


class Runner:
    def __init__(self, model, loader, optimizer):
        self.model, self.loader, self.optimizer = model, loader, optimizer
        self._iter = iter(loader)

    def run_step(self):
        features, targets = next(self._iter)
        losses = self.model(features.cuda(non_blocking=True), targets.cuda(non_blocking=True))
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()

    def train(self, iters):
        self.model.train()
        for _ in range(iters):
            self.run_step()
