from common import *


class BoxLoss(nn.Module):
    """Matches boxes to priors on every step: the per-step work reaches it through `__call__`."""

    def __init__(self, priors):
        super().__init__()
        self.priors = priors
        self.smooth_l1 = nn.L1Loss()

    def forward(self, locs, scores, boxes, labels):
        n, p = locs.size(0), self.priors.size(0)
        true_locs = torch.zeros((n, p, 4), dtype=torch.float).to(device)  # expect: GPU106
        true_classes = torch.zeros((n, p), dtype=torch.long).to(device)  # expect: GPU106
        for i in range(n):
            picked = torch.LongTensor(range(boxes[i].size(0))).to(device)  # expect: GPU106
            true_classes[i, :picked.size(0)] = labels[i][picked]
        positive = true_classes != 0
        loc_loss = self.smooth_l1(locs[positive], true_locs[positive])  # expect: GPU104, GPU104
        conf = F.cross_entropy(scores.view(-1, scores.size(2)), true_classes.view(-1))
        return conf + loc_loss


def make_priors(size):
    # Built once, at set-up: a host tensor moved once is no per-step cost.
    return torch.FloatTensor(np.random.rand(size, 4)).to(device)
