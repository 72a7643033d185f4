import argparse

import torch
from torch.cuda.amp import GradScaler

from retrieval.training.train import train, build_loader
from retrieval.layers import Encoder


def convert_to_fp32(model):
    for p in model.parameters():
        p.data = p.data.float()
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    model = Encoder(512).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = GradScaler()  # expect: GPU303
    loader = build_loader()
    for epoch in range(args.epochs):
        train(model, loader, optimizer, scaler)


if __name__ == "__main__":
    main()
