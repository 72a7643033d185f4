"""The entry script: the factory's objects meet the engine's loops here."""
import argparse
import torch
from torch.utils.data import DataLoader
from models import build_detr
from engine import evaluate, train_one_epoch


def build_model_main(args):
    if args.name == "detr":
        model, criterion, postprocessors = build_detr(args)
    else:
        raise NotImplementedError
    return model, criterion, postprocessors


def main(args):
    device = torch.device("cuda")
    model, criterion, postprocessors = build_model_main(args)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters())
    loader = DataLoader(torch.load("d.pt"), batch_size=2, num_workers=2, pin_memory=True, persistent_workers=True)
    for epoch in range(10):
        train_one_epoch(model, criterion, loader, optimizer, device)
        evaluate(model, postprocessors, loader, device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="detr")
    main(parser.parse_args())
