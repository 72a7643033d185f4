import torch
import torch.nn as nn

from layers.target_layer import target_layer


class PoseNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.backbone = nn.Conv2d(3, 64, 3, padding=1)
        self.head = nn.Linear(64, num_classes * 4)

    def forward(self, x, label_gt, gt_boxes):
        feat = self.backbone(x).mean((2, 3))
        rois = self.head(feat)
        labels = target_layer(rois, gt_boxes)
        return nn.functional.smooth_l1_loss(rois, label_gt), labels


def posenet(num_classes, weights=None):
    model = PoseNet(num_classes)
    if weights is not None:
        model.load_state_dict(torch.load(weights))
    return model
