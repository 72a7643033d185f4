"""A model whose forward packs variable-length histories: it needs the lengths on the host."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .base import BaseModel


class Evolving(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gru = nn.GRU(dim, dim, batch_first=True)

    def forward(self, keys, lengths):
        packed = pack_padded_sequence(keys, lengths=lengths.cpu(), batch_first=True, enforce_sorted=False)  # expect: GPU103
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return out.sum(1)


class InterestNet(BaseModel):
    def __init__(self, dim, device="cpu"):
        super().__init__(device)
        self.evolving = Evolving(dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        lengths = (x.abs().sum(-1) > 0).sum(-1).clamp(min=1)
        return torch.sigmoid(self.head(self.evolving(x, lengths)))


class DraftNet(BaseModel):
    def __init__(self, dim, device="cpu"):
        super().__init__(device)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        print("mean input", x.mean().item())  # expect: GPU101 info
        return torch.sigmoid(self.head(x.mean(1)))
