"""Every documented command starts this script with plain `python`: its distributed arms
(the `else` of the local rank tests) run in no shipped run."""
import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, TensorDataset

from bert.config import EncoderConfig


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--do_train", action="store_true")
    parser.add_argument("--data_dir", default="data/")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--no_cuda", action="store_true")
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    if args.local_rank == -1 or args.no_cuda:
        device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
    config = EncoderConfig(args.data_dir + "/config.json")
    model = torch.nn.Linear(config.hidden_size, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(*torch.load(args.data_dir + "/train.pt"))
    if args.local_rank == -1:
        sampler = RandomSampler(data)
    else:
        sampler = DistributedSampler(data)  # expect: GPU501 info
    loader = DataLoader(data, sampler=sampler, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(args.epochs):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()
        torch.save(model.state_dict(), f"classifier_{epoch}.bin")  # expect: GPU504 info


if __name__ == "__main__":
    main()
