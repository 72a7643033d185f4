import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, x, lengths):
        return self.encoder(x, lengths)
