import torch

from pkg.registry import register


@register("trainer", "classifier")
class ClassifierTrainer:
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
                print(loss.item())  # expect: GPU101
