import argparse

import torch
import torch.nn.functional as F

# A script with no `__main__` block, run by its path: the README names it.
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()
model = torch.nn.Linear(8, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)


def sweep_epoch(loader):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()
        meter.update(loss.item())  # expect: GPU101
