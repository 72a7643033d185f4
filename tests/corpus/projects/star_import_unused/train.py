import argparse

import torch
import torchvision

from core.certify import *
from models.build import build_model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_type", default="conv")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    model = build_model(args).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=torchvision.transforms.ToTensor())
    loader = torch.utils.data.DataLoader(data, batch_size=128, shuffle=True, num_workers=4, pin_memory=True,
                                         persistent_workers=True)
    for epoch in range(args.epochs):
        model.train()
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(accuracy(logits, y).item())  # expect: GPU101
        model.eval()
        # train_certified(loader, model, opt, 8 / 255)


if __name__ == "__main__":
    main()
