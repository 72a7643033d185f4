import torch


class PlainOptimizer:
    """A look-alike wrapper whose backward scales nothing."""

    def __init__(self, params, lr):
        self._optimizer = torch.optim.AdamW(params, lr=lr)

    def zero_grad(self):
        self._optimizer.zero_grad()

    def backward(self, loss):
        loss.backward()

    def step(self):
        self._optimizer.step()
