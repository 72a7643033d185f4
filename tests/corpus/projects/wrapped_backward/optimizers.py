import torch


class Optimizer:
    """Wraps a torch optimizer; with `amp`, scales the loss with the GradScaler it holds."""

    def __init__(self, params, lr, amp=True):
        self._optimizer = torch.optim.AdamW(params, lr=lr)
        self._scaler = torch.amp.GradScaler("cuda") if amp else None

    def zero_grad(self):
        self._optimizer.zero_grad()

    def backward(self, loss):
        if self._scaler is not None:
            self._scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self):
        if self._scaler is not None:
            self._scaler.step(self._optimizer)
            self._scaler.update()
        else:
            self._optimizer.step()
