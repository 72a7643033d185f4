import argparse

import torch

from scalers import HalfScaler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="food101")
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = HalfScaler() if args.fp16 else None
    for _ in range(10):
        x = torch.randn(4, 8, device="cuda")
        with torch.autocast("cuda", enabled=args.fp16):
            loss = model(x).sum()
        if scaler is not None:
            scaler(loss, optimizer)
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
