import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList(nn.Linear(config.hidden, config.hidden) for _ in range(config.layers))

    def forward(self, x, labels=None):
        for layer in self.layers:
            if getattr(self.config, "gradient_checkpointing", False) and self.training:
                x = checkpoint(layer, x)  # expect: GPU405 info
            else:
                x = layer(x)
        return x


class Decoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layers = nn.ModuleList(nn.Linear(config.hidden, config.hidden) for _ in range(config.layers))

    def forward(self, x, labels=None):
        for layer in self.layers:
            if getattr(self.config, "grad_ckpt", False) and self.training:
                x = checkpoint(layer, x)  # expect: GPU405
            else:
                x = layer(x)
        return x
