"""A model shipped as remote code: the library builds it from `config.json`."""
import torch.nn as nn
import torch.utils.checkpoint as checkpoint
from transformers import PreTrainedModel

from configuration_tinynet import TinyNetConfig


class TinyBlock(nn.Module):
    def __init__(self, dim, with_cp=False, recompute=True):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.with_cp = with_cp
        self.recompute = recompute

    def forward(self, x):
        if self.with_cp and x.requires_grad:
            x = checkpoint.checkpoint(self.fc, x)  # expect: GPU405 info
        if self.recompute:
            # The config's own default turns this one on.
            x = checkpoint.checkpoint(self.fc, x)  # expect: GPU405
        return x


class TinyNetPreTrainedModel(PreTrainedModel):
    config_class = TinyNetConfig


class TinyNetModel(TinyNetPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.blocks = nn.ModuleList(
            [TinyBlock(64, with_cp=config.with_cp, recompute=config.use_cache) for _ in range(config.depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
