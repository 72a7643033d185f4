"""Trains with the settings of a YAML file loaded with OmegaConf."""
import argparse

import torch
from omegaconf import OmegaConf


def main(cfg, model, loader, optimizer):
    weight = 1.0
    for batch in loader:
        frames = batch["frames"].cuda()
        score = model(frames)
        if cfg.use_adapted_weight:
            if score.mean() < 0.05:  # expect: GPU104 info
                weight = 0.0
        if cfg.check_sync:
            if score.mean() > 0.9:  # expect: GPU104
                weight = 0.5
        loss = score.pow(2).mean() * weight
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="./configs/stage2.yaml")
    args = parser.parse_args()
    config = OmegaConf.load(args.config)
    main(config, None, [], None)
