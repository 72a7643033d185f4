"""Entry point: loaders configured from settings.py and options.py."""

import torch
from torch.utils.data import DataLoader

from options import get_parser
from settings import EVAL_KWARGS, LOADER_KWARGS, SWEEP_KWARGS, CacheConfig, DataConfig


def train_one_epoch(model, loader, optimizer, device):
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, train_set, val_set, extra_set, cached_set):
    args = get_parser().parse_args()
    data_cfg = DataConfig()
    cache_cfg = CacheConfig(num_workers=args.workers)
    device = torch.device("cuda")
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    train_loader = DataLoader(train_set, shuffle=True, **LOADER_KWARGS)  # expect: GPU201, GPU202
    val_loader = DataLoader(val_set, **EVAL_KWARGS)  # expect: GPU204
    extra_loader = DataLoader(extra_set, batch_size=64, num_workers=data_cfg.num_workers, pin_memory=data_cfg.pin_memory)  # expect: GPU201, GPU204
    cached_loader = DataLoader(cached_set, batch_size=64, num_workers=cache_cfg.num_workers, pin_memory=cache_cfg.pin_memory)  # expect: GPU204
    args_loader = DataLoader(extra_set, batch_size=64, num_workers=args.workers, pin_memory=True)  # expect: GPU204
    sweep_loader = DataLoader(extra_set, persistent_workers=True, **SWEEP_KWARGS)
    for epoch in range(args.epochs):
        train_one_epoch(model, train_loader, optimizer, device)
        train_one_epoch(model, val_loader, optimizer, device)
        train_one_epoch(model, extra_loader, optimizer, device)
        train_one_epoch(model, cached_loader, optimizer, device)
        train_one_epoch(model, args_loader, optimizer, device)
        train_one_epoch(model, sweep_loader, optimizer, device)
