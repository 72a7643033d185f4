import torch

from trainer import *


def main(loader):
    torch.backends.cudnn.benchmark = True
    model = torch.nn.Linear(16, 4)
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), workspace="out")
    trainer.train(loader, epochs=10)
