"""A detector, its set criterion and its matcher, built together by one factory."""
import torch
import torch.nn as nn


class Matcher(nn.Module):
    @torch.no_grad()
    def forward(self, outputs, targets):
        cost = torch.cdist(outputs, targets)
        return cost.cpu().argmin(-1)  # expect: GPU103


class SetCriterion(nn.Module):
    def __init__(self, matcher):
        super().__init__()
        self.matcher = matcher

    def forward(self, outputs, targets):
        indices = self.matcher(outputs, targets)
        num = torch.as_tensor([float(len(targets))], device=outputs.device)
        num = torch.clamp(num, min=1).item()  # expect: GPU101
        return ((outputs - targets[indices]) ** 2).sum() / num


class Detector(nn.Module):
    def __init__(self, queries=4):
        super().__init__()
        self.queries = nn.Embedding(queries, 4)
        self.box_head = nn.Linear(4, 4)

    def forward(self, x):
        return self.box_head(x + self.queries.weight.sum(0))


class PostProcess(nn.Module):
    @torch.no_grad()
    def forward(self, outputs):
        return outputs.softmax(-1).cpu()


def build_detr(args):
    model = Detector()
    criterion = SetCriterion(Matcher())
    postprocessors = {"bbox": PostProcess()}
    return model, criterion, postprocessors
