"""Sets the worker count from its command line before building the loader."""
import argparse

from config import config, update_workers
from dataloader import get_train_loader


def main(dataset, model, optimizer):
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    update_workers(args.workers)
    train_loader = get_train_loader(dataset)
    model.cuda()
    for epoch in range(config.nepochs):
        for minibatch in train_loader:
            loss = model(minibatch["data"].cuda(non_blocking=True)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
