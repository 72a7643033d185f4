import torch


class RealValueLoss(torch.nn.Module):
    def __init__(self, coef=1.0, check_nan=False, log_norms=False):
        super().__init__()
        self.coef = coef
        self.check_nan = check_nan
        self.log_norms = log_norms

    def forward(self, pred, target):
        loss = self.coef * (pred - target).square().mean()
        if self.check_nan:
            if torch.isnan(loss):  # expect: GPU104 info
                raise ValueError("the loss is NaN")
        if self.log_norms:
            print("prediction norm", pred.norm().item())  # expect: GPU101
        return loss
