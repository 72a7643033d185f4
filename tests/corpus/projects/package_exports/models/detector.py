import torch.nn as nn

from models.utils import SinePositionEmbedding


class Detector(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.position = SinePositionEmbedding(dim)
        self.proj = nn.Linear(dim, 4)

    def forward(self, tokens):
        return self.proj(tokens + self.position(tokens))
