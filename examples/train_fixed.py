"""Small DDP + mixed-precision training script: the corrected twin of train.py.

Batches come from pinned memory, the sampler reshuffles every epoch, fp16 autocast
is paired with a GradScaler, per-step metrics stay on the GPU and are read once per
epoch, and only rank 0 saves the unwrapped model's weights.

    torchrun --nproc_per_node=2 examples/train_fixed.py --epochs 5
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm


class SyntheticImages(Dataset):
    """Random 3x32x32 images whose label is a fixed linear function of the pixels."""

    def __init__(self, n=20_000, num_classes=10, split_seed=0):
        proj = torch.randn(3 * 32 * 32, num_classes, generator=torch.Generator().manual_seed(1234))
        g = torch.Generator().manual_seed(split_seed)
        self.images = torch.randn(n, 3, 32, 32, generator=g)
        self.labels = (self.images.flatten(1) @ proj).argmax(dim=1)

    def __len__(self):
        return self.images.size(0)

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10, width=32):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(2 * width)
        self.conv3 = nn.Conv2d(2 * width, 4 * width, 3, padding=1)
        self.bn3 = nn.BatchNorm2d(4 * width)
        self.fc = nn.Linear(4 * width, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = F.relu(self.bn3(self.conv3(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def parse_args():
    p = argparse.ArgumentParser(description="DDP + AMP training on synthetic images")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--num-samples", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-dir", default="checkpoints")
    return p.parse_args()


def setup_distributed():
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return dist.get_rank(), dist.get_world_size(), local_rank


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    total = 0
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        correct += (model(images).argmax(dim=1) == labels).sum()
        total += labels.size(0)
    return correct.item() / max(total, 1)


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed()
    device = torch.device("cuda", local_rank)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True  # fixed 3x32x32 inputs: let cuDNN pick the fastest kernels
    os.makedirs(args.out_dir, exist_ok=True)

    dataset = SyntheticImages(n=args.num_samples, split_seed=args.seed)
    val_set = SyntheticImages(n=2_000, split_seed=args.seed + 1)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=sampler,
        num_workers=args.workers,
        pin_memory=True,
        persistent_workers=True,
        drop_last=True,
    )
    val_loader = DataLoader(val_set, batch_size=512, num_workers=args.workers, pin_memory=True, persistent_workers=True)

    model = SmallCNN().to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.amp.GradScaler("cuda")

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        epoch_start = time.time()
        running_loss = torch.zeros((), device=device)
        correct = torch.zeros((), dtype=torch.long, device=device)
        seen = 0
        pbar = tqdm(loader, desc=f"epoch {epoch}", disable=rank != 0)
        for images, labels in pbar:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(images)
                loss = F.cross_entropy(logits, labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

            running_loss += loss.detach()
            correct += (logits.argmax(dim=1) == labels).sum()
            seen += labels.size(0)

        scheduler.step()
        dist.all_reduce(running_loss, op=dist.ReduceOp.AVG)
        epoch_loss = running_loss.item() / len(loader)
        if rank == 0:
            elapsed = time.time() - epoch_start
            val_acc = evaluate(model.module, val_loader, device)
            print(
                f"epoch {epoch}: loss {epoch_loss:.4f} "
                f"train acc {correct.item() / seen:.3f} val acc {val_acc:.3f} ({elapsed:.1f}s)"
            )
            torch.save(model.module.state_dict(), os.path.join(args.out_dir, f"epoch_{epoch}.pt"))

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
