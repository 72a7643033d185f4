"""ImageNet-style DDP training in fp16 with autocast + GradScaler (the recommended AMP recipe).

    torchrun --nproc_per_node=4 amp_fp16_gradscaler.py --epochs 40 --print-freq 100
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class AverageMeter:
    """Running average of Python floats."""

    def __init__(self, name):
        self.name = name
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class RandomImageNet(Dataset):
    def __init__(self, length, num_classes=1000):
        self.length = length
        self.num_classes = num_classes

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        return torch.randn(3, 224, 224), torch.randint(0, self.num_classes, ()).long()


def build_model(num_classes):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))  # expect: GPU704 info

    return nn.Sequential(
        block(3, 64), block(64, 128), block(128, 256), block(256, 512),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes),
    )


def train_one_epoch(model, loader, sampler, criterion, optimizer, scaler, epoch, args):
    sampler.set_epoch(epoch)
    model.train()
    losses = AverageMeter("loss")
    end = time.time()
    for step, (images, target) in enumerate(loader):
        images = images.cuda(args.gpu, non_blocking=True)
        target = target.cuda(args.gpu, non_blocking=True)
        with torch.cuda.amp.autocast():  # trap: GPU301  # expect: GPU303
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
        scaler.step(optimizer)
        scaler.update()
        losses.update(loss.item(), images.size(0))  # expect: GPU101
        batch_time = time.time() - end
        end = time.time()
        if step % args.print_freq == 0 and args.rank == 0:
            print(  # trap: GPU102
                f"epoch {epoch} [{step}/{len(loader)}] loss {losses.avg:.4f} "
                f"scale {scaler.get_scale():.0f} time {batch_time:.3f}"
            )
        if step % args.print_freq == 0:
            top_logit = output.float().max().item()  # expect: GPU101 info
            if args.rank == 0 and top_logit > 1e4:
                print(f"warning: logits are exploding ({top_logit:.1f})")  # trap: GPU102
    return losses.avg


def validate(model, loader, args):
    model.eval()
    correct = torch.zeros((), device=f"cuda:{args.gpu}")
    with torch.no_grad():
        for images, target in loader:
            images = images.cuda(args.gpu, non_blocking=True)
            target = target.cuda(args.gpu, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):  # trap: GPU301
                output = model(images)
            correct += (output.argmax(dim=1) == target).sum()
            print(output.shape)  # trap: GPU102
    dist.all_reduce(correct)
    return correct.item() / len(loader.dataset)  # trap: GPU101


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--start-epoch", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.2)
    p.add_argument("--workers", type=int, default=10)
    p.add_argument("--print-freq", type=int, default=100)
    p.add_argument("--resume", default="")
    p.add_argument("--out", default="./runs/amp")
    args = p.parse_args()

    dist.init_process_group("nccl")
    args.rank = dist.get_rank()
    args.gpu = int(os.environ["LOCAL_RANK"])  # trap: GPU101
    torch.cuda.set_device(args.gpu)

    train_set = RandomImageNet(1_281_167)
    val_set = RandomImageNet(50_000)
    train_sampler = DistributedSampler(train_set)  # trap: GPU501
    val_sampler = DistributedSampler(val_set, shuffle=False)  # trap: GPU501
    train_loader = DataLoader(  # trap: GPU201  # expect: GPU204
        train_set, batch_size=args.batch_size, sampler=train_sampler,
        num_workers=args.workers, pin_memory=True, drop_last=True,
    )
    val_loader = DataLoader(val_set, batch_size=256, sampler=val_sampler, num_workers=args.workers, pin_memory=True)  # trap: GPU201  # expect: GPU204

    model = DDP(build_model(1000).cuda(args.gpu), device_ids=[args.gpu])
    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-5)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = GradScaler()  # expect: GPU303

    best_acc1 = 0.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
        model.module.load_state_dict(ckpt["state_dict"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        args.start_epoch = ckpt["epoch"]
        best_acc1 = ckpt["best_acc1"]

    for epoch in range(args.start_epoch, args.epochs):
        train_loss = train_one_epoch(model, train_loader, train_sampler, criterion, optimizer, scaler, epoch, args)
        acc1 = validate(model, val_loader, args)
        scheduler.step()
        dist.barrier()  # trap: GPU105
        if args.rank == 0:
            print(f"epoch {epoch}: train loss {train_loss:.4f} val acc {acc1:.4f}")  # trap: GPU102
            best_acc1 = max(acc1, best_acc1)
            torch.save(
                {
                    "epoch": epoch + 1,
                    "state_dict": model.module.state_dict(),  # trap: GPU503
                    "optimizer": optimizer.state_dict(),  # trap: GPU503
                    "scaler": scaler.state_dict(),
                    "best_acc1": best_acc1,
                },
                os.path.join(args.out, "checkpoint.pth.tar"),
            )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
