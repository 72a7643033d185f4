"""The script the project runs."""
import argparse

import torch
from torch.utils.data import DataLoader

from margins import ArcMargin, CosMargin


def train(args, dataset, net):
    loader = DataLoader(dataset, batch_size=256, shuffle=True, num_workers=8, pin_memory=True)  # expect: GPU204
    margin = ArcMargin(512, 1000) if args.margin == "arc" else CosMargin(512, 1000)
    margin = margin.cuda()
    opt = torch.optim.SGD(list(net.parameters()) + list(margin.parameters()), lr=0.1)
    for epoch in range(30):
        for img, label in loader:
            img, label = img.cuda(non_blocking=True), label.cuda(non_blocking=True)
            output = margin(net(img), label)
            loss = torch.nn.functional.cross_entropy(output, label)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(loss.item())  # expect: GPU101


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--margin", default="arc")
    train(parser.parse_args(), None, None)
