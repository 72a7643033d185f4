import torch


class Trainer(object):
    def __init__(self, model, criterion, optimizer, device):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.device = device

    def train_one_epoch(self, loader):
        for images, targets in loader:
            outputs = self.model(images.to(self.device, non_blocking=True))
            loss_dict = self.criterion(outputs=outputs, targets=targets)
            self.optimizer.zero_grad()
            loss_dict["losses"].backward()
            self.optimizer.step()


def build_trainer(model, criterion, optimizer, device):
    return Trainer(model, criterion, optimizer, device)
