import argparse

import torch

from domainlib import algorithms

parser = argparse.ArgumentParser()
parser.add_argument("--algorithm", default="ERM")
parser.add_argument("--steps", type=int, default=5000)
parser.add_argument("--checkpoint_freq", type=int, default=300)
args = parser.parse_args()


def evaluate(algorithm, loader, device):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (algorithm.predict(x.to(device)).argmax(1) == y.to(device)).sum().item()  # expect: GPU101 info
    return correct


def main(train_iterators, eval_loader):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    algorithm_class = algorithms.get_algorithm_class(args.algorithm)
    algorithm = algorithm_class(10, {"lr": 1e-3, "anneal_iters": 100})
    algorithm.to(device)
    for step in range(args.steps):
        minibatches = [(x.to(device), y.to(device)) for x, y in next(train_iterators)]
        step_vals = algorithm.update(minibatches)
        if step % args.checkpoint_freq == 0:
            print(step, step_vals, evaluate(algorithm, eval_loader, device))


if __name__ == "__main__":
    main(None, None)
