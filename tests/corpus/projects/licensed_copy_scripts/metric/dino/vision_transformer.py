"""The backbone the project's metric script loads."""
from torch import nn

from .utils import trunc_normal_


class VisionTransformer(nn.Module):
    def __init__(self, dim=384):
        super().__init__()
        self.proj = nn.Linear(768, dim)
        trunc_normal_(self.proj.weight)

    def forward(self, x):
        return self.proj(x)
