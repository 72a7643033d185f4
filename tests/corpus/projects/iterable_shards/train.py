import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from streams import ConstantLengthDataset


def main(samples, model):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", rank)
    model = DDP(model.to(device), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters())
    dataset = ConstantLengthDataset(samples, 512)
    loader = DataLoader(dataset, batch_size=8, num_workers=2, pin_memory=True, persistent_workers=True)
    for batch in loader:
        loss = model(batch.to(device, non_blocking=True)).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
