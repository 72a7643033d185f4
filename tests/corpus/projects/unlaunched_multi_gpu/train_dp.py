"""A second entry point whose multi-GPU switch the README's command passes."""
import argparse

import torch
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--dp", action="store_true")
    args = parser.parse_args()
    model = nn.Linear(8, 8).cuda()
    if args.dp:
        model = nn.DataParallel(model)  # expect: GPU505
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        x = torch.randn(4, 8, device="cuda")
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = True
    main()
