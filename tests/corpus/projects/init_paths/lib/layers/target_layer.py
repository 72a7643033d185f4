import numpy as np
import torch


def target_layer(rois, gt_boxes):
    """Assigns proposals to ground-truth boxes on the host, every forward of the network."""
    rois = rois.detach().cpu().numpy()  # expect: GPU103
    gt = gt_boxes.detach().cpu().numpy()  # expect: GPU103
    labels = np.zeros(len(rois), dtype=np.int64)
    labels[: min(len(rois), len(gt))] = 1
    return torch.from_numpy(labels)
