"""A detectron2-style meta-architecture: the registry builds it as `cls(cfg)`, and its
`@configurable` `__init__` takes what `from_config` returns, by keyword."""
import torch.nn as nn
from detectron2.config import configurable
from detectron2.modeling import META_ARCH_REGISTRY

from .criterion import Evaluator, SetCriterion


@META_ARCH_REGISTRY.register()
class MaskSegmenter(nn.Module):
    @configurable
    def __init__(self, *, num_queries, criterion, evaluator=None):
        super().__init__()
        self.queries = nn.Embedding(num_queries, 256)
        self.class_head = nn.Linear(256, 81)
        self.criterion = criterion
        self.evaluator = evaluator

    @classmethod
    def from_config(cls, cfg):
        criterion = SetCriterion(cfg.MODEL.NUM_CLASSES, weight_dict={"loss_ce": 1.0})
        return {"num_queries": cfg.MODEL.NUM_QUERIES, "criterion": criterion}

    def forward(self, batched_inputs):
        outputs = {"pred_logits": self.class_head(self.queries.weight).expand(len(batched_inputs), -1, -1)}
        if self.training:
            targets = [x["instances"] for x in batched_inputs]
            losses = self.criterion(outputs, targets)
            return {k: v * self.criterion.weight_dict[k] for k, v in losses.items()}
        if self.evaluator is not None:
            return self.evaluator(outputs)
        return outputs
