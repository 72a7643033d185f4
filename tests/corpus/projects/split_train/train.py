"""Trains the detector with DDP and fp16 autocast; helpers live in data.py, losses.py, utils.py."""

import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data import build_loaders
from losses import BoxLoss, ScoreLoss
from utils import NativeScaler, accuracy, is_main_process, log_metrics, save_checkpoint


def main(cfg):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    model = torch.nn.Linear(256, 5).cuda()
    model = DDP(model, device_ids=[rank])
    train_loader, val_loader, sampler = build_loaders(cfg, rank, dist.get_world_size())
    criterion = BoxLoss()
    score_loss = ScoreLoss(track=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    # trap: GPU301 (NativeScaler scales the loss)
    scaler = NativeScaler()
    step = 0
    for epoch in range(cfg.epochs):
        model.train()
        for images, boxes in train_loader:
            images, boxes = images.cuda(non_blocking=True), boxes.cuda(non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                pred = model(images)
                loss = criterion(pred, boxes) + score_loss(pred, boxes)
            scaler(loss, optimizer)
            acc = accuracy(pred, boxes[..., 0].long())
            log_metrics(step, loss)
            step += 1
        criterion.summary()
        is_main = is_main_process()
        if is_main:
            # trap: GPU504 (rank-0 guard held in a variable)
            torch.save({"epoch": epoch}, cfg.out / "state.pt")
            save_checkpoint(model, cfg.out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    main(parser.parse_args())
