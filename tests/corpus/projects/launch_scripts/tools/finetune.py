import argparse

import torch
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataloader_num_workers", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    model = torch.nn.Linear(16, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = torch.load("finetune.pt")
    loader = DataLoader(dataset, batch_size=64, shuffle=True, pin_memory=True, num_workers=args.dataloader_num_workers)  # expect: GPU202
    for epoch in range(args.epochs):
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # expect: GPU305 info
            optimizer.step()


if __name__ == "__main__":
    main()
