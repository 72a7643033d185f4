"""Engines that own the model they are handed: one trains it, one only evaluates it."""
import torch


class Engine:
    def __init__(self, loader, model, optimizer=None):
        self.loader = loader
        self.model = model
        self.optimizer = optimizer

    def run(self, max_epoch):
        for epoch in range(max_epoch):
            for batch in self.loader:
                self.forward_backward(batch)

    def forward_backward(self, batch):
        raise NotImplementedError


class SoftmaxEngine(Engine):
    def forward_backward(self, batch):
        imgs, pids = batch
        loss = torch.nn.functional.cross_entropy(self.model(imgs.cuda(non_blocking=True)), pids.cuda(non_blocking=True))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class Evaluator:
    def __init__(self, loader, model):
        self.loader = loader
        self.model = model

    @torch.no_grad()
    def run(self):
        self.model.eval()
        return [self.model(imgs.cuda(non_blocking=True)).argmax(1) for imgs, _ in self.loader]
