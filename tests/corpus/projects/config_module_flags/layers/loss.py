"""The detector's loss: optional terms switched by the selected recipe."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from data import cfg


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.class_instances = None

    def forward(self, conf_data, conf_t, mask_scores, mask_t):
        loss_c = F.cross_entropy(conf_data, conf_t, reduction="none")
        if cfg.use_class_balanced_conf:
            # No recipe turns this on: the host copies below never run.
            classes, counts = conf_t.unique(return_counts=True)  # expect: GPU104 info
            for _cls, _cnt in zip(classes.cpu().numpy(), counts.cpu().numpy()):  # expect: GPU103 info
                loss_c = loss_c * _cnt
        if cfg.use_objectness_score:
            keep = conf_t[conf_t > 0]  # expect: GPU104 info
            loss_c = loss_c + keep.float().mean()
        loss = loss_c.sum()
        if cfg.use_mask_scoring:
            # The "plus" recipe turns this on.
            for i in range(mask_t.size(0)):
                if mask_t[i].sum() < 1:  # expect: GPU104
                    continue
                loss = loss + mask_scores[i].mean()
        return loss
