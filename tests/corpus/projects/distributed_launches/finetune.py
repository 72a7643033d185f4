import argparse
import os

import torch



def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--model", default="small")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--evaluate", action="store_true")
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    args.distributed = False
    if "WORLD_SIZE" in os.environ:
        args.distributed = int(os.environ["WORLD_SIZE"]) > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
    torch.backends.cuda.matmul.allow_tf32 = True
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.zeros(64).long())
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if args.distributed else None
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4, pin_memory=True,
                                         persistent_workers=True)
    if args.evaluate:
        return
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for input, target in loader:
            input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(input), target)
            if not args.distributed:
                print("loss", loss.item())  # expect: GPU101
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
