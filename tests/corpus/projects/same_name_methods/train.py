"""The trainer has a `run` method too: `loaders.run()` below is the loader class's."""
import torch

from data.loaders import LoaderSet


class Trainer:
    def __init__(self, model, loader):
        self.model = model.cuda()
        self.loader = loader
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def run(self):
        for epoch in range(10):
            for x, y in self.loader:
                loss = torch.nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
                self.opt.zero_grad()
                loss.backward()  # expect: GPU305 info
                self.opt.step()


def main(dataset, model):
    loaders = LoaderSet(dataset, 64)
    train_loader, val_loader = loaders.run()
    Trainer(model, train_loader).run()


if __name__ == "__main__":
    main(None, torch.nn.Linear(4, 4))
