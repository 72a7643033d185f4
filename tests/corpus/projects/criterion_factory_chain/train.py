import argparse

import torch

from engine import build_trainer
from models import build_model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="yolo")
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    device = torch.device("cuda")
    cfg = {"conf_thresh": 0.3}
    model, criterion, post = build_model(args, cfg, device, trainable=True)
    trainer = build_trainer(model, criterion, torch.optim.SGD(model.parameters(), lr=0.01), device)
    for epoch in range(args.epochs):
        trainer.train_one_epoch(loader)
    print(post(model(demo_image.to(device)).sigmoid()))


if __name__ == "__main__":
    main()
