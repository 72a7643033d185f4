import torch
import torch.nn as nn


class NCELoss(nn.Module):
    """Named by the shipped config: built."""

    def __init__(self, cfg):
        super().__init__()
        self.temperature = cfg.temperature

    def forward(self, video, text):
        logits = video @ text.t() / self.temperature
        labels = torch.arange(len(logits)).cuda()  # expect: GPU106
        return nn.functional.cross_entropy(logits, labels)


class HardNegLoss(nn.Module):
    """Named by no text of the project: never built."""

    def __init__(self, cfg):
        super().__init__()
        self.margin = 0.2

    def forward(self, video, text):
        sim = video @ text.t()
        labels = torch.arange(len(sim)).cuda()  # expect: GPU106 info
        return (sim - self.margin).clamp(min=0).mean() + nn.functional.cross_entropy(sim, labels)


def build_loss(cfg):
    return globals()[cfg.loss_name](cfg)
