"""Algorithms picked by the name a command line gives (`get_algorithm_class(args.algorithm)`)."""
import torch
import torch.nn.functional as F

ALGORITHMS = ["ERM", "Annealed"]


def get_algorithm_class(algorithm_name):
    if algorithm_name not in globals():
        raise NotImplementedError("Algorithm not found: {}".format(algorithm_name))
    return globals()[algorithm_name]


class Algorithm(torch.nn.Module):
    def update(self, minibatches):
        raise NotImplementedError

    def predict(self, x):
        raise NotImplementedError


class ERM(Algorithm):
    def __init__(self, num_classes, hparams):
        super().__init__()
        self.network = torch.nn.Linear(8, num_classes)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=hparams["lr"])

    def update(self, minibatches):
        x = torch.cat([x for x, y in minibatches])
        y = torch.cat([y for x, y in minibatches])
        loss = F.cross_entropy(self.predict(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}  # expect: GPU101

    def predict(self, x):
        return self.network(x)


class Annealed(ERM):
    def __init__(self, num_classes, hparams):
        super().__init__(num_classes, hparams)
        self.register_buffer("update_count", torch.tensor([0]))
        self.hparams = hparams

    def update(self, minibatches):
        x = torch.cat([x for x, y in minibatches])
        y = torch.cat([y for x, y in minibatches])
        loss = F.cross_entropy(self.predict(x), y)
        if self.update_count >= self.hparams["anneal_iters"]:  # expect: GPU104
            loss = loss * 2
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.update_count += 1
        return {"loss": loss.item()}  # expect: GPU101
