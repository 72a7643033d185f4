import torch


class Trainer:
    """Runs the training loop; what a step computes comes from the script, as a callback."""

    def __init__(self, model, loader, optimizer):
        self.model = model.cuda()
        self.loader = loader
        self.optimizer = optimizer

    def train(self, get_loss, epochs):
        self.model.train()
        for epoch in range(epochs):
            for step, batch in enumerate(self.loader):
                batch = [t.cuda(non_blocking=True) for t in batch]
                loss = get_loss(self.model, batch, step)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def finish(self, report):
        # Called once, after training: what it runs is not per step.
        report(self.model)
