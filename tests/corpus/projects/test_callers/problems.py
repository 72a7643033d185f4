"""Model problems shared by the training script and the test suite."""
import torch


class LinearODE(torch.nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.A = torch.nn.Parameter(torch.randn(dim, dim) * 0.1)

    def forward(self, t, y):
        return y @ self.A

    def exact(self, t):
        # Only the tests compare against the closed form; no training step calls it.
        return torch.as_tensor(t.detach().cpu().numpy() * 2.0)


def residual(pred, target):
    print("residual", (pred - target).abs().max().item())  # expect: GPU101
    return (pred - target).pow(2).mean()
