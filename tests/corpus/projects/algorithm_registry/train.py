import argparse

import torch
from torch.utils.data import DataLoader

from algo import algo_factory
from trackers import make_tracker  # an installed package of the lab's
from utils.train_utils import run_epoch

parser = argparse.ArgumentParser()
parser.add_argument("--algo", default="bc")
parser.add_argument("--epochs", type=int, default=100)
args = parser.parse_args()

nets = torch.load("nets.pt")
optimizers = {name: torch.optim.Adam(net.parameters()) for name, net in nets.items()}
model = algo_factory(args.algo, nets=nets, optimizers=optimizers, device=torch.device("cuda"))
loader = DataLoader(torch.load("dataset.pt"), batch_size=256, shuffle=True, num_workers=2, pin_memory=True, persistent_workers=True)
tracker = make_tracker(args.algo)
for epoch in range(args.epochs):
    run_epoch(model, loader, epoch, num_steps=500, tracker=tracker)
