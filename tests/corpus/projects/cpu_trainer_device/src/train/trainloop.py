import torch


class TrainLoop:
    """Every experiment builds it with the CPU device: its copies and reads stay on the host."""

    def __init__(self, model, train_loader, optimizer, loss_fn, device):
        self.model = model
        self.train_loader = train_loader
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self.device = device

    def fit(self, epochs=1):
        for epoch in range(epochs):
            running_loss = 0.0
            for i, data in enumerate(self.train_loader):
                inputs, labels = data["x"], data["y"]
                inputs, labels = inputs.to(self.device), labels.to(self.device)
                self.optimizer.zero_grad()
                loss = self.loss_fn(self.model(inputs), labels)
                loss.backward()
                self.optimizer.step()
                running_loss += loss.item()  # expect: GPU101 info
            print(epoch, running_loss)
