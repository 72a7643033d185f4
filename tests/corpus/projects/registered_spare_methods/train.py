import runpy

import torch
from torch.utils.data import DataLoader

from lib.registry import MODELS


def main(config_path="run_configs/segmentor.py"):
    cfg = runpy.run_path(config_path)
    model = MODELS.build(cfg["model"]).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(build_dataset(), batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(10):
        for images, masks in loader:
            loss = model(images.cuda(non_blocking=True), masks.cuda(non_blocking=True))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
