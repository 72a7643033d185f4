import torch
import torch.nn as nn


class FocalLoss(nn.Module):
    """The loss the shipped config picks by name."""

    def __init__(self, conf):
        super().__init__()
        self.gamma = conf.get("gamma", 2.0)

    def forward(self, pred, target):  # expect: GPU701 info
        ce = nn.functional.cross_entropy(pred, target, reduction="none")
        if torch.isnan(ce).any():  # expect: GPU104
            raise ValueError("nan loss")
        return ((1 - torch.exp(-ce)) ** self.gamma * ce).mean()


class HausdorffLoss(nn.Module):
    """No config, script or document names it: kept from an experiment."""

    def __init__(self, conf):
        super().__init__()

    def forward(self, pred, target):
        field = torch.from_numpy(distance_field(target.cpu().numpy())).to(pred.device)  # expect: GPU103 info
        return (pred.softmax(1)[:, 1] * field).mean()
