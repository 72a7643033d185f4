import os

import torch

from trainer import Trainer


def main(loader):
    torch.backends.cudnn.benchmark = True
    model = torch.nn.Linear(16, 4)
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), int(os.environ["LOCAL_RANK"]))
    trainer.train(loader, epochs=10)
