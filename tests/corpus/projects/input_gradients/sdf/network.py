import torch
import torch.nn as nn


class SDFNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 256), nn.Softplus(), nn.Linear(256, 1))

    def gradient(self, x):
        x.requires_grad_(True)
        sdf = self.body(x)
        return torch.autograd.grad(sdf, x, torch.ones_like(sdf), create_graph=False)[0]

    def forward(self, points):
        return self.body(points), self.gradient(points)


class ColorNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 256), nn.ReLU(), nn.Linear(256, 3))

    def forward(self, points):
        return self.body(points)
