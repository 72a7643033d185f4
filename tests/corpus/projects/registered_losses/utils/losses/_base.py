from torch.nn.modules.loss import _Loss


class WeightedLoss(_Loss):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction=reduction)
        self.weight = weight
