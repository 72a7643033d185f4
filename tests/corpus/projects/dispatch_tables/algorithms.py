"""Training methods as classes; run_methods.py builds the one a run names from a dict written out."""
import torch


class ERM(torch.nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.network = torch.nn.Linear(8, 2).cuda()
        self.optimizer = torch.optim.SGD(self.network.parameters(), lr=hparams.lr)
        self.eta = hparams.eta

    def compute_loss(self, x, y):
        return torch.nn.functional.cross_entropy(self.network(x), y)

    def update(self, x, y):
        x, y = x.cuda(), y.cuda()
        loss = self.compute_loss(x, y)
        self.optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        self.optimizer.step()
        return loss.item()  # expect: GPU101

    def summary(self):
        # Read once, after training.
        return self.network.weight.norm().item()


class GroupDRO(ERM):
    def __init__(self, hparams):
        super().__init__(hparams)
        self.q = torch.ones(4, device="cuda")

    def compute_loss(self, x, y):
        # The training method of the base class calls this override on every step.
        losses = torch.nn.functional.cross_entropy(self.network(x), y, reduction="none")
        self.q[0] *= (self.eta * losses.mean()).exp().item()  # expect: GPU101
        return (self.q[0] * losses).mean()
