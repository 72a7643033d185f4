"""Mixed-precision helpers kept apart from the training loop, as diffusion codebases do."""

import torch


def clear_grads(model_params):
    for param in model_params:
        if param.grad is not None:
            param.grad.detach_()
            param.grad.zero_()  # expect: GPU401


def reset_probe(probe_params):
    # Run once, before training starts: nothing per step.
    for p in probe_params:
        if p.grad is not None:
            p.grad.zero_()


class HalfTrainer:
    def __init__(self, model):
        self.model = model
        self.params = list(model.parameters())
        self.scale = 2.0 ** 16

    def zero_grad(self):
        clear_grads(self.params)

    def scaled(self, loss):
        return loss * self.scale
