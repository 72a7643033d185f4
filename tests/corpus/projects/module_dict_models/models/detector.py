import torch
import torch.nn as nn
import torch.nn.functional as F

from .loss.hard_mining import hard_negative_mask


class TextDetector(nn.Module):
    def __init__(self, channels=64):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU(), nn.Conv2d(channels, 1, 1))

    def forward(self, imgs, gt_texts=None):
        score = self.body(imgs)[:, 0]
        if gt_texts is None:
            return score
        masks = torch.stack([hard_negative_mask(s, g) for s, g in zip(score, gt_texts)])
        return F.binary_cross_entropy_with_logits(score, gt_texts.float(), weight=masks.float())
