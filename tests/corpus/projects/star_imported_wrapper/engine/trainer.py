import torch

# The wrapper class comes in through a star import: the loader it wraps is still the training one.
from loading.base import *


class Trainer:
    def __init__(self, args, model, train_set, test_set):
        self.args = args
        self.model = model.cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr)
        self.train_loader, self.test_loader = set_loader(args, train_set, test_set)
        self.inf_loader = InfiniteLoader(self.train_loader)

    def train_epoch(self):
        self.model.train()
        for step in range(self.args.epoch_step):
            images, labels = next(self.inf_loader)
            images = images.cuda()
            labels = labels.cuda()
            loss = torch.nn.functional.cross_entropy(self.model(images), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def validate(self):
        self.model.eval()
        with torch.no_grad():
            for images, labels in self.test_loader:
                self.model(images.cuda(non_blocking=True))
