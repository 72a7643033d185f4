import torch
import torch.nn.functional as F


class Criterion(object):
    """Built by the module's own factory and handed through two packages to the trainer."""

    def __init__(self, cfg, device):
        self.cfg = cfg
        self.device = device

    def __call__(self, outputs, targets):
        num_fgs = targets["labels"].numel()
        loss_cls = F.cross_entropy(outputs["cls"], targets["labels"].to(self.device))
        pos = outputs["obj"][outputs["obj"] > 0.5]  # expect: GPU104
        norm = max(num_fgs, 1)
        return {"losses": loss_cls + pos.sum() / norm, "num_pos": pos.numel()}


def build_criterion(cfg, device):
    criterion = Criterion(cfg=cfg, device=device)
    return criterion
