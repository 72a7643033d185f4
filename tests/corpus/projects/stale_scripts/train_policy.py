import sys

import torch

from utils import load_data, repeater


def main(dataset_dir, steps):
    loader = repeater(load_data(dataset_dir, ["top"], 8, chunk_size=100))
    policy = torch.nn.Linear(14, 14).cuda()
    optimizer = torch.optim.AdamW(policy.parameters())
    for step in range(steps):
        qpos, actions = next(loader)
        loss = (policy(qpos.cuda(non_blocking=True)) - actions.cuda(non_blocking=True)).abs().mean()
        optimizer.zero_grad()
        loss.backward()  # expect: GPU305 info
        optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
