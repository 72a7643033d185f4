import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

from matting import MattingRefine


def train_worker(rank, args):
    torch.distributed.init_process_group("nccl", rank=rank, world_size=args.world_size)
    torch.cuda.set_device(rank)
    model = MattingRefine(args.mode).to(rank)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model_distributed = DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for step in range(args.steps):
        src = torch.rand(4, 3, 256, 256, device=rank)
        bgr = torch.rand(4, 3, 256, 256, device=rank)
        out, _ = model_distributed(src, bgr)
        loss = out.abs().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="sampling", choices=["full", "sampling"])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--world-size", type=int, default=1)
    args = parser.parse_args()
    torch.multiprocessing.spawn(train_worker, nprocs=args.world_size, args=(args,))
