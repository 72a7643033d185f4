"""A keypoint detector kept as a copy of another project, built through a config and run by the
demo under no_grad; the project trains nothing, so no training loop runs its forward."""

import torch
import torch.nn as nn


_MODELS = {}


def register(name):
    def add(cls):
        _MODELS[name] = cls
        return cls
    return add


@register("detector")
class Detector(nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(channels, 17, 1)

    def train(self, mode=True):
        # Keeps the stem frozen, as the original project's fine-tuning did.
        super().train(mode)
        self.backbone[0].eval()
        return self

    def forward(self, images, targets=None):
        heatmaps = self.head(self.backbone(images))
        if targets is not None:
            return (heatmaps - targets).pow(2).mean()
        if torch.isnan(heatmaps).any():
            raise ValueError("non-finite heatmaps")
        peak = heatmaps.flatten(1).max().item()
        return heatmaps / peak


def build(config):
    return _MODELS[config["name"]](config["channels"])
