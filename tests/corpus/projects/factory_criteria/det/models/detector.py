from torch import nn

from .criterion import BoxPostProcess, SetCriterion
from .matcher import build_matcher


class Detector(nn.Module):
    def __init__(self, num_queries):
        super().__init__()
        self.query = nn.Embedding(num_queries, 4)

    def forward(self, samples):
        return {"pred_boxes": self.query.weight[None] + samples.mean()}


def build(args):
    model = Detector(args.num_queries)
    matcher = build_matcher(args)
    weight_dict = {"loss_bbox": args.bbox_loss_coef}
    if args.aux_loss:
        weight_dict.update({k + "_aux": v for k, v in weight_dict.items()})
    criterion = SetCriterion(args.num_classes, matcher=matcher, weight_dict=weight_dict)
    return model, criterion, {"bbox": BoxPostProcess()}
