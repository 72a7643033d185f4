import torch
import torch.nn as nn


class Agent(nn.Module):
    """Installed from its folder (`pip install -e externals/ext`) and imported as `extpkg`:
    the project's roots do not resolve that import, so the module counts as used."""

    def forward(self, obs, target):
        target = target.cuda(non_blocking=True)
        valid = target >= 0
        count = valid.sum().item()  # expect: GPU101
        return nn.functional.mse_loss(obs, target.float()) / max(count, 1)
