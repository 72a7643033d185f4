import torch.distributed as dist

from trainer import Trainer


def main(config, network, loader):
    dist.init_process_group("nccl")
    local_rank = dist.get_rank()
    if local_rank == 0:
        run = config.exp_id if config.exp_id != "null" else None
        model = Trainer(network, save_path=f"saves/{run}/{run}" if run is not None else None, local_rank=local_rank)
    else:
        model = Trainer(network, local_rank=local_rank)
    model.fit(loader, config.save_every)
