"""Exports the detector for serving; a fine-tuning step may be added here later."""

import torch

from pose.detector import build


def export(path):
    detector = build({"name": "detector", "channels": 64})
    detector.load_state_dict(torch.load(path))
    return detector


def finetune(detector, loader, optimizer):
    for images, targets in loader:
        loss = (detector(images.cuda()) - targets.cuda()).pow(2).mean()
        return loss
