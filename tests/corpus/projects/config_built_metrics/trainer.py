import torch

from metrics import MetricsProcessor


class Trainer:
    def __init__(self, config, model, optimizer, loader):
        self.metrics: MetricsProcessor = config.metrics.build()
        self.model = model.cuda()
        self.optimizer = optimizer
        self.loader = loader
        self.step = 0

    def train(self):
        for inputs, labels in self.loader:
            self.step += 1
            loss = torch.nn.functional.cross_entropy(self.model(inputs.cuda()), labels.cuda())
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.log(loss)
            print(loss.item())  # expect: GPU101

    def log(self, loss):
        should_log = self.metrics.should_log(self.step)
        if not should_log:
            return
        self.metrics.log(self.step, {"loss": loss.item()})  # expect: GPU101 info
