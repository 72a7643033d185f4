import torch


class LARS(torch.optim.Optimizer):
    """Layer-wise adaptive rates around another optimizer, stepped through a loss scaler."""

    def __init__(self, optimizer, trust_coefficient=0.02, eps=1e-8):
        self.optim = optimizer
        self.trust_coefficient = trust_coefficient
        self.eps = eps

    @property
    def param_groups(self):
        return self.optim.param_groups

    def zero_grad(self):
        self.optim.zero_grad()

    def step(self):
        with torch.no_grad():
            for group in self.optim.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    param_norm = torch.norm(p.data)
                    grad_norm = torch.norm(p.grad.data)
                    if param_norm != 0 and grad_norm != 0:  # expect: GPU104, GPU104
                        p.grad.data *= self.trust_coefficient * param_norm / (grad_norm + self.eps)
        self.optim.step()
