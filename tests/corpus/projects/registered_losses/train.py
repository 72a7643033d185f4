import torch
from torch.utils.data import DataLoader

from utils.runners.trainer import Trainer


def main(dataset, model):
    loader = DataLoader(dataset, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
    cfg = {"loss": {"name": "MatchingLoss"}, "lr": 0.1}
    Trainer(cfg, model, loader).run(10)


if __name__ == "__main__":
    main(None, torch.nn.Linear(4, 4))
