"""Not imported by the training script: new tensors are on the host here."""
import torch


def export_anchors(model, sizes):
    for size in sizes:
        anchors = torch.zeros(size, 4).cuda()  # expect: GPU106 info
        model.register_anchors(anchors)
