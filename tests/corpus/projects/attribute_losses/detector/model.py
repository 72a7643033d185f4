import torch.nn as nn

from detector import losses


class Detector(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.head = nn.Linear(256, num_classes)
        self.focal_loss = losses.FocalLoss()
        self.metric = losses.EvalMetric()

    def forward(self, inputs):
        features, annotations = inputs
        classification = self.head(features)
        if self.training:
            return self.focal_loss(classification, annotations)
        return classification

    def score(self, features, labels):
        return self.metric(self.head(features), labels)


def detector50(num_classes):
    return Detector(num_classes)
