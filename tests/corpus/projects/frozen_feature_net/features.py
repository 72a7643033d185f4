"""A feature network that is built frozen unless asked otherwise."""
import torch.nn as nn


class FeatureNet(nn.Module):
    def __init__(self, dims=2048, requires_grad=False):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 64, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.5), nn.Linear(64, dims))
        for param in self.parameters():
            param.requires_grad = requires_grad

    def forward(self, x):
        return [self.body(x)]


class ProbeNet(nn.Module):
    def __init__(self, dims=10, requires_grad=False):
        super().__init__()
        self.head = nn.Linear(2048, dims)
        for param in self.parameters():
            param.requires_grad = requires_grad

    def forward(self, x):
        return self.head(x)
