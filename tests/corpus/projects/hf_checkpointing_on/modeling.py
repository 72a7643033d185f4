import torch
from torch import nn
from transformers import PreTrainedModel


class Encoder(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.gradient_checkpointing = False

    def forward(self, hidden, labels=None):
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden = torch.utils.checkpoint.checkpoint(layer, hidden)  # expect: GPU405
            else:
                hidden = layer(hidden)
        return hidden


class EncoderModel(PreTrainedModel):
    supports_gradient_checkpointing = True

    def __init__(self, config):
        super().__init__(config)
        self.encoder = Encoder([nn.Linear(config.hidden_size, config.hidden_size) for _ in range(4)])

    def _set_gradient_checkpointing(self, module, value=False):
        if isinstance(module, Encoder):
            module.gradient_checkpointing = value

    def forward(self, inputs, labels=None):
        return self.encoder(inputs, labels)
