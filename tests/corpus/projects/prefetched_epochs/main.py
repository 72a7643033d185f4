import argparse

import torch
from torch.utils.data import DataLoader

from engine import train_one_epoch
from scaling import scale_learning_rates


def main(args, model, criterion, dataset_train):
    scale_learning_rates(args)
    device = torch.device("cuda")
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data_loader_train = DataLoader(dataset_train, batch_size=2, shuffle=True, num_workers=args.num_workers, pin_memory=True)  # expect: GPU204
    for epoch in range(args.epochs):
        train_one_epoch(model, criterion, data_loader_train, optimizer, device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_workers", default=2, type=int)
    parser.add_argument("--epochs", default=50, type=int)
    parser.add_argument("--batch_size", default=2, type=int)
    parser.add_argument("--lr", default=2e-4, type=float)
    parser.add_argument("--lr_backbone", default=2e-5, type=float)
    main(parser.parse_args(), None, None, None)
