"""Trains the model a config file names by its dotted path."""
import sys

import torch
import yaml
from torch.utils.data import DataLoader
from torchvision.datasets import FakeData
from torchvision.transforms import ToTensor

from ldm.util import instantiate_from_config


def main(config_path):
    config = yaml.safe_load(open(config_path))
    model = instantiate_from_config(config["model"]).cuda()
    loader = DataLoader(FakeData(transform=ToTensor()), batch_size=16, shuffle=True, num_workers=8,
                        pin_memory=True, persistent_workers=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(10):
        for images, _ in loader:
            loss = model(images.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1])
