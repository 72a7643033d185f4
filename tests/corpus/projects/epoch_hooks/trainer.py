import torch


class Callback:
    def on_epoch_begin(self, epoch):
        pass


class Trainer:
    """Runs the epochs; callbacks hook into them."""

    def __init__(self, model, optimizer, train_data, callbacks=()):
        self.model = model.cuda()
        self.optimizer = optimizer
        self.train_data = train_data
        self.callbacks = list(callbacks)
        for callback in self.callbacks:
            callback.trainer = self

    def train(self, n_epochs):
        for epoch in range(n_epochs):
            for callback in self.callbacks:
                callback.on_epoch_begin(epoch)
            for x, y in self.train_data:
                loss = self.model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
