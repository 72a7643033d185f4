import torch

from pkg.registry import register


# A copy the package's `__init__.py` leaves out: importing the package never loads it.
@register("trainer", "classifier")
class DistillTrainer:
    def __init__(self, model, optimizer):
        self.model = model.cuda()
        self.optimizer = optimizer

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
                loss = torch.nn.functional.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                print(loss.item())  # expect: GPU101 info
