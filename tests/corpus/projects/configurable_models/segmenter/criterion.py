"""The set criterion: its forward runs on every training step of the model that holds it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SetCriterion(nn.Module):
    def __init__(self, num_classes, weight_dict):
        super().__init__()
        self.num_classes = num_classes
        self.weight_dict = weight_dict

    def forward(self, outputs, targets):
        num_masks = sum(len(t["labels"]) for t in targets)
        num_masks = torch.as_tensor([num_masks], dtype=torch.float, device=outputs["pred_logits"].device)
        num_masks = torch.clamp(num_masks, min=1).item()  # expect: GPU101
        labels = torch.cat([t["labels"] for t in targets])
        return {"loss_ce": F.cross_entropy(outputs["pred_logits"].flatten(0, 1)[: len(labels)], labels) / num_masks}


class Evaluator(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes

    def forward(self, outputs):
        return outputs["pred_logits"].argmax(-1).cpu()  # expect: GPU103 info
