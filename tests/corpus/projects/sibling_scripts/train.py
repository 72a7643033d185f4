"""Trains the small net; its loader workers come from the command line."""
import argparse

import torch
from torch.utils.data import DataLoader

import pkg

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=4)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

model = pkg.build_net(256).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
dataset = torch.load("train.pt")
for epoch in range(args.epochs):
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=args.workers, pin_memory=True)  # expect: GPU204
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
