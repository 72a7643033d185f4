import torch
from torch.utils.data import DataLoader

from core.engine import train_one_epoch
from engines.distill import distill_one_epoch
from speech.utils.audio import load


def main():
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer)
        distill_one_epoch(model, loader, optimizer)


if __name__ == "__main__":
    main()
