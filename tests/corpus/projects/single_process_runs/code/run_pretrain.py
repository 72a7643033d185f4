"""Look-alike: the same shape, but the README launches this script on eight processes."""
import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--do_train", action="store_true")
    parser.add_argument("--data_dir", default="corpus/")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    if args.local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
    model = torch.nn.Linear(16, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(*torch.load(args.data_dir + "/train.pt"))
    if args.local_rank == -1:
        sampler = RandomSampler(data)
    else:
        sampler = DistributedSampler(data)  # expect: GPU501
    loader = DataLoader(data, sampler=sampler, batch_size=32, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(args.epochs):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()
        torch.save(model.state_dict(), f"encoder_{epoch}.bin")  # expect: GPU504


if __name__ == "__main__":
    main()
