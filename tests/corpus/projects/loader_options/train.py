"""Launcher: collects the options of the run into one attribute dict and hands it on."""

import argparse

from training import loop
from utils.easydict import EasyDict


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--pin", action="store_true")
    parser.add_argument("--steps", type=int, default=1000)
    opts = parser.parse_args()

    c = EasyDict()
    c.dataset = None
    if opts.steps < 1:
        raise SystemExit("--steps must be positive")
    c.loader_kwargs = EasyDict(pin_memory=True, num_workers=opts.workers, prefetch_factor=2)
    c.val_loader_kwargs = EasyDict(num_workers=opts.workers)
    c.val_loader_kwargs.pin_memory = opts.pin
    c.update(batch_size=128, total_steps=opts.steps)
    loop.training_loop(**c)


if __name__ == "__main__":
    main()
