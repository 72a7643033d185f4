import argparse

import torch
from torch.utils.data import DataLoader

from diffusion import FastVoiceModel, VoiceModel
from solvers import train_loop


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", default="plain")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if args.kind == "plain":
        model = VoiceModel(80)
    else:
        model = FastVoiceModel(80)
    model = model.to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader_train = DataLoader(torch.load("train.pt"), batch_size=16, shuffle=True, num_workers=4, pin_memory=True, persistent_workers=True)
    loader_test = DataLoader(torch.load("test.pt"), batch_size=1, num_workers=2, pin_memory=True)  # expect: GPU204
    train_loop.train(args, model, optimizer, loader_train, loader_test)


if __name__ == "__main__":
    main()
