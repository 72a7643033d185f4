"""The vendored framework's base model."""
from torch import nn


class SeqModel(nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder
