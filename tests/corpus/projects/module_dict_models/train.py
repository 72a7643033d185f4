"""Training: the model class is named by the config and looked up in the package's namespace."""
import importlib
import sys

import torch
from torch.utils.data import DataLoader
from torchvision.datasets import FakeData

from models import build_model


def main(config_module):
    cfg = importlib.import_module(config_module)
    model = build_model(cfg.model).cuda()
    loader = DataLoader(FakeData(), batch_size=16, shuffle=True, num_workers=8, pin_memory=True, persistent_workers=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for epoch in range(100):
        for imgs, gt_texts in loader:
            imgs, gt_texts = imgs.cuda(non_blocking=True), gt_texts.cuda(non_blocking=True)
            loss = model(imgs, gt_texts)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1])
