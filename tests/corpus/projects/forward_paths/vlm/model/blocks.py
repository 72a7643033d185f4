"""A mixture-of-experts layer, built by name from the model config."""
import numpy as np
import torch
import torch.nn as nn


class MoEBlock(nn.Module):
    def __init__(self, dim, experts):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(experts))
        self.skip = torch.tensor(np.array([0, 1, 1, 0], dtype=bool))

    def forward(self, x):
        choice = self.router(x).argmax(-1)
        counts = torch.bincount(choice, minlength=len(self.experts))
        sizes = counts.cpu().tolist()  # expect: GPU103 info
        host_mask = torch.tensor([True, False, True])
        kept = self.skip[host_mask]
        return torch.cat([e(part) for e, part in zip(self.experts, x.split(sizes))]) * kept.float().mean()
