"""A classification trainer: its validation pass relies on the base class's mode switch."""
import torch
import torch.nn as nn

from trainer.base import Trainer


class ClsTrainer(Trainer):
    def _validate(self, model, data_loader, epoch):
        correct = 0
        with torch.no_grad():
            for images, labels in data_loader:
                images, labels = images.cuda(), labels.cuda()
                correct += (model(images).argmax(1) == labels).sum()
        return {"epoch": epoch, "correct": correct}

    def train_one_epoch(self, epoch, optimizer):
        self.network.train()
        for images, labels in self.provider.train:
            loss = nn.functional.cross_entropy(self.network(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return self.validate(epoch=epoch)


def build(provider):
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Flatten(), nn.LazyLinear(10)).cuda()  # expect: GPU704 info, GPU706 info
    return ClsTrainer(net, provider)
