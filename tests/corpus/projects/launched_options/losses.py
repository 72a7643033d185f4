import torch


def contrastive_term(out):
    logits = out @ out.t()
    labels = torch.arange(out.shape[0]).cuda()  # expect: GPU106 info
    return torch.nn.functional.cross_entropy(logits, labels)


class MaskLoss(torch.nn.Module):
    """Overlapping masks by default; separate masks only when a run asks for them."""

    def __init__(self, overlap=False):
        super().__init__()
        self.overlap = overlap

    def forward(self, pred):
        if self.overlap:
            target = torch.where(pred > 0.5, 1.0, 0.0)
        else:
            target = pred[pred > 0.5]  # expect: GPU104 info
        return (pred - target.mean()).pow(2).mean()
