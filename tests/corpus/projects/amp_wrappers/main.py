"""Entry point: builds the model and the loss scaler and runs the epochs."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from engine import train_epoch, train_epoch_plain
from tools.amp import PlainBackward, ScaledBackward as LossScaler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--plain", action="store_true")
    args = parser.parse_args()
    device = torch.device("cuda")
    model = torch.nn.Linear(32, 4).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = torch.nn.CrossEntropyLoss()
    data = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
    loader = DataLoader(data, batch_size=64, shuffle=True, pin_memory=True)
    loss_scaler = LossScaler()
    for _ in range(args.epochs):
        train_epoch(model, loader, optimizer, criterion, device, loss_scaler, accum=2)
    if args.plain:
        for _ in range(args.epochs):
            train_epoch_plain(model, loader, optimizer, criterion, device, PlainBackward())
    torch.save({"model": model.state_dict(), "scaler": loss_scaler.state_dict()}, "ckpt.pt")


if __name__ == "__main__":
    main()
