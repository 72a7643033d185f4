"""Multi-GPU ResNet training with DistributedDataParallel.

Launch with torchrun:
    torchrun --nproc_per_node=8 ddp_resnet_train.py --epochs 90 --batch-size 256
"""
import argparse
import logging
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger("ddp_train")


class RandomImages(Dataset):
    """Stand-in for an ImageFolder: deterministic random images per index."""

    def __init__(self, size, num_classes, resolution=224):
        self.size = size
        self.num_classes = num_classes
        self.resolution = resolution

    def __len__(self):
        return self.size

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        img = torch.randn(3, self.resolution, self.resolution, generator=g)
        return img, idx % self.num_classes


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)  # expect: GPU704 info
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.short(x))


class TinyResNet(nn.Module):
    def __init__(self, num_classes=1000, widths=(64, 128, 256, 512)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        layers, cin = [], widths[0]
        for i, w in enumerate(widths):
            layers.append(BasicBlock(cin, w, stride=1 if i == 0 else 2))
            cin = w
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=90)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=5.0)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--num-classes", type=int, default=1000)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--pin-memory", action="store_true")
    p.add_argument("--out", default="./runs/resnet")
    return p.parse_args()


def setup():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])  # trap: GPU101
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), local_rank


def train_one_epoch(model, loader, optimizer, scheduler, epoch, args, rank, device):
    model.train()
    loss_sum = torch.zeros(1, device=device)
    n = 0
    for step, (images, targets) in enumerate(loader):
        images = images.cuda(device, non_blocking=True)
        targets = targets.cuda(device, non_blocking=True)
        with torch.autocast(device_type="cuda"):  # expect: GPU301
            outputs = model(images)
            loss = F.cross_entropy(outputs, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        scheduler.step()
        torch.cuda.synchronize()  # expect: GPU105
        loss_sum += loss.detach()
        n += 1
        if step % args.log_every == 0:
            reduced = loss.detach().clone()
            dist.all_reduce(reduced, op=dist.ReduceOp.AVG)
            if rank == 0:
                logger.info("epoch %d step %d/%d loss %.4f", epoch, step, len(loader), reduced.item())  # expect: GPU101 info
    return loss_sum / max(n, 1)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros(1, device=device)
    total = torch.zeros(1, device=device)
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        preds = model(images).argmax(dim=1)
        correct += (preds == targets).sum()
        total += targets.numel()
    dist.all_reduce(correct)
    dist.all_reduce(total)
    torch.cuda.synchronize()  # trap: GPU105
    return (correct / total).item()  # trap: GPU101


def main():
    args = parse_args()
    rank, world_size, local_rank = setup()
    device = torch.device("cuda", local_rank)
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING)
    os.makedirs(args.out, exist_ok=True)

    train_set = RandomImages(1_281_167, args.num_classes)
    val_set = RandomImages(50_000, args.num_classes)
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank)  # expect: GPU501
    val_sampler = DistributedSampler(val_set, shuffle=False)  # trap: GPU501
    train_loader = DataLoader(  # trap: GPU201  # expect: GPU201 info
        train_set,
        batch_size=args.batch_size,
        sampler=train_sampler,
        num_workers=args.workers,
        pin_memory=args.pin_memory,
        persistent_workers=True,
    )
    val_loader = DataLoader(val_set, batch_size=args.batch_size, sampler=val_sampler, num_workers=args.workers)  # expect: GPU201, GPU204

    model = TinyResNet(num_classes=args.num_classes).to(device)
    if rank == 0:
        torch.save(model.state_dict(), os.path.join(args.out, "init.pt"))  # trap: GPU503
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=args.epochs * len(train_loader))

    for epoch in range(args.epochs):
        t0 = time.time()
        train_loss = train_one_epoch(model, train_loader, optimizer, scheduler, epoch, args, rank, device)
        dist.all_reduce(train_loss, op=dist.ReduceOp.AVG)
        val_acc = evaluate(model, val_loader, device)
        if rank == 0:
            logger.info(  # trap: GPU101
                "epoch %d train_loss %.4f val_acc %.3f (%.0fs)", epoch, train_loss.item(), val_acc, time.time() - t0
            )
            ckpt = {
                "epoch": epoch,
                "model": model.state_dict(),  # expect: GPU503
                "optimizer": optimizer.state_dict(),  # trap: GPU503
                "scheduler": scheduler.state_dict(),
            }
            torch.save(ckpt, os.path.join(args.out, f"epoch_{epoch:03d}.pt"))

    if rank == 0:
        torch.save(model.state_dict(), os.path.join(args.out, "final.pt"))  # expect: GPU503
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
