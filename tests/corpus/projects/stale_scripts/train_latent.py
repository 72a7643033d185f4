"""The first latent-model trainer, written before `load_data` took a chunk size."""
import sys

import torch

from utils import load_data


def main(dataset_dir, epochs):
    loader = load_data(dataset_dir, ["top"], 8)
    model = torch.nn.Linear(14, 14).cuda()
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(epochs):
        for qpos, actions in loader:
            loss = (model(qpos.cuda(non_blocking=True)) - actions.cuda(non_blocking=True)).abs().mean()
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()
            print(loss.item())  # expect: GPU101 info


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
