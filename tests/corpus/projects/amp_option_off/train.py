import argparse
from contextlib import suppress

import torch

from scalers import NativeScaler, native_autocast


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="food101")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--amp", action="store_true")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.amp:
        loss_scaler = NativeScaler()
        amp_autocast = torch.cuda.amp.autocast  # expect: GPU303 info
        amp_autocast = native_autocast()
    else:
        loss_scaler = None
        amp_autocast = suppress
    for _ in range(args.epochs):
        x = torch.randn(4, 8, device="cuda")
        with amp_autocast():
            loss = model(x).sum()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer)
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
