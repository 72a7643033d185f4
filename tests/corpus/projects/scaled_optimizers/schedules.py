import torch


class WarmupClipper:
    """A look-alike: its `step` clips a learning rate; a scaler never steps it."""

    def __init__(self, base_lr, warmup):
        self.base_lr = base_lr
        self.warmup = warmup
        self.history = []

    def step(self, lr_tensor):
        if lr_tensor > self.base_lr:
            lr_tensor = torch.full_like(lr_tensor, self.base_lr)
        self.history.append(lr_tensor.item())
        return lr_tensor
