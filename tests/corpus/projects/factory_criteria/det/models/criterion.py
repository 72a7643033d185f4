import torch
from torch import nn


class SetCriterion(nn.Module):
    def __init__(self, num_classes, matcher, weight_dict):
        super().__init__()
        self.num_classes = num_classes
        self.matcher = matcher
        self.weight_dict = weight_dict

    def forward(self, outputs, targets):
        indices = self.matcher(outputs, targets)
        num_boxes = sum(len(t["labels"]) for t in targets)
        num_boxes = torch.as_tensor([num_boxes], dtype=torch.float, device=outputs["pred_boxes"].device)
        num_boxes = torch.clamp(num_boxes, min=1).item()  # expect: GPU101
        return {"loss_bbox": outputs["pred_boxes"].sum() / num_boxes, "indices": len(indices)}


class BoxPostProcess(nn.Module):
    """Turns outputs into boxes for the evaluator: never on the training path."""

    @torch.no_grad()
    def forward(self, outputs, sizes):
        boxes = outputs["pred_boxes"] * sizes
        return [{"boxes": b.cpu()} for b in boxes]
