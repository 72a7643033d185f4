import torch


class GpuLoop:
    """The look-alike: its one construction passes the GPU when there is one."""

    def __init__(self, model, train_loader, optimizer, device):
        self.model = model
        self.train_loader = train_loader
        self.optimizer = optimizer
        self.device = device

    def fit(self, epochs=1):
        for epoch in range(epochs):
            for inputs, labels in self.train_loader:
                inputs, labels = inputs.to(self.device), labels.to(self.device)
                self.optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(self.model(inputs), labels)
                loss.backward()
                self.optimizer.step()
                print(loss.item())  # expect: GPU101
