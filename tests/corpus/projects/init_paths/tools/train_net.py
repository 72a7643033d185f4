import argparse

import torch

import _init_paths  # noqa: F401
import networks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--network", dest="network_name", default="posenet")
    args = parser.parse_args()
    network = networks.__dict__[args.network_name](21).cuda()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(20):
        for image, label, boxes in loader:
            loss, _ = network(image.cuda(non_blocking=True), label.cuda(non_blocking=True), boxes.cuda(non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
