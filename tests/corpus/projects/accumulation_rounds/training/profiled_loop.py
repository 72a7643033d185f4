"""The same loop with per-round timings: the `with` helper here only measures."""

import torch

from torch_utils import misc


def profiled_loop(net, loss_fn, dataset_iterator, optimizer, device, num_rounds, total_steps):
    ddp = torch.nn.parallel.DistributedDataParallel(net, device_ids=[device])
    stats = {}
    for step in range(total_steps):
        optimizer.zero_grad(set_to_none=True)
        for round_idx in range(num_rounds):
            with misc.timed(stats, "round"):
                images, labels = next(dataset_iterator)
                loss = loss_fn(ddp, images.to(device), labels.to(device))
                loss.sum().mul(1 / num_rounds).backward()  # expect: GPU506
        optimizer.step()
    return stats
