import argparse

import torch

import _init_paths  # noqa: F401
from config import cfg, update_config
from core.function import train_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", required=True)
    args = parser.parse_args()
    update_config(cfg, args)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    model = torch.nn.Linear(32, 17).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    dataset = torch.utils.data.TensorDataset(torch.randn(256, 32), torch.randn(256, 17))
    train_loader = torch.utils.data.DataLoader(  # expect: GPU204
        dataset,
        batch_size=cfg.TRAIN.BATCH_SIZE,
        shuffle=True,
        num_workers=cfg.WORKERS,
        pin_memory=cfg.PIN_MEMORY,
    )
    for epoch in range(cfg.TRAIN.EPOCHS):
        train_one_epoch(train_loader, model, optimizer)


if __name__ == "__main__":
    main()
