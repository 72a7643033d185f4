import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from modules.modeling import Captioner


def init_model(args, device):
    model = Captioner.from_pretrained(args)
    return model.to(device)


def train_epoch(model, loader, optimizer, device):
    for text, video in loader:
        loss = model(text.to(device, non_blocking=True), video.to(device, non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(args, loader):
    torch.distributed.init_process_group("nccl")
    device = torch.device("cuda", args.local_rank)
    model = init_model(args, device)
    model = DDP(model, device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(args.epochs):
        train_epoch(model, loader, optimizer, device)
