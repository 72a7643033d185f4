"""Entry point: the run's settings, the device among them, go to the trainer in one dict."""

import json

import torch

from core.trainer import Trainer


def main(path):
    with open(path) as f:
        config = json.load(f)
    if torch.cuda.is_available():
        config["device"] = torch.device(f"cuda:{config['local_rank']}")
    else:
        config["device"] = "cpu"
    Trainer(config).train()


if __name__ == "__main__":
    main("configs/inpainting.json")
