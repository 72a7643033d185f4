"""The main loop: several accumulation rounds per optimizer step, one DDP model per rank."""

import torch

from torch_utils import misc


def training_loop(net, loss_fn, dataset_iterator, optimizer, device, num_rounds, total_steps):
    ddp = torch.nn.parallel.DistributedDataParallel(net, device_ids=[device])
    for step in range(total_steps):
        optimizer.zero_grad(set_to_none=True)
        for round_idx in range(num_rounds):
            with misc.ddp_sync(ddp, round_idx == num_rounds - 1):
                images, labels = next(dataset_iterator)
                loss = loss_fn(ddp, images.to(device), labels.to(device))
                loss.sum().mul(1 / num_rounds).backward()  # trap: GPU506 (ddp_sync enters no_sync)
        optimizer.step()
