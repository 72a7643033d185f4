"""Parses the options and trains."""
import sys
from argparse import Namespace

import torch

sys.path.append(".")

from options.train_options import TrainOptions  # noqa: E402
from training.coach import Coach  # noqa: E402


def main(net, train_dataset, test_dataset):
    opts = TrainOptions().parse()
    if opts.resume_from:
        # Resuming takes the options saved with the checkpoint.
        opts = Namespace(**torch.load(opts.resume_from, map_location="cpu")["opts"])
    coach = Coach(opts, net, train_dataset, test_dataset)
    coach.train()


if __name__ == "__main__":
    main(None, None, None)
