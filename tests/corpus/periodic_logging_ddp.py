"""Semi-supervised (pseudo-label) image classification with DDP.

Logging is throttled: every --log-every steps, and only on rank 0 where it writes
to TensorBoard / Weights & Biases.

    torchrun --nproc_per_node=4 periodic_logging_ddp.py --wandb
"""
import argparse
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import wandb
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)

LOADER_KWARGS = {"num_workers": 6, "pin_memory": True, "persistent_workers": True, "drop_last": True}


class TwoViewImages(Dataset):
    """Returns (weak, strong) augmentations of unlabeled images, or (image, label) pairs."""

    def __init__(self, n, labeled, num_classes=10, size=32):
        self.n, self.labeled, self.num_classes, self.size = n, labeled, num_classes, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, self.size, self.size, generator=torch.Generator().manual_seed(i))
        if self.labeled:
            return img, i % self.num_classes
        weak = img.flip(-1)
        strong = (img + 0.3 * torch.randn_like(img)).roll(4, dims=-1)
        return weak, strong


def wide_net(num_classes=10, width=128):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),  # expect: GPU704 info, GPU706 info
        nn.Conv2d(width, width, 3, padding=1, stride=2), nn.BatchNorm2d(width), nn.ReLU(),  # expect: GPU706 info
        nn.Conv2d(width, 2 * width, 3, padding=1, stride=2), nn.BatchNorm2d(2 * width), nn.ReLU(),  # expect: GPU706 info
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, num_classes),
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--mu", type=int, default=7)
    p.add_argument("--lr", type=float, default=0.03)
    p.add_argument("--threshold", type=float, default=0.95)
    p.add_argument("--lambda-u", type=float, default=1.0)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--hist-every", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--wandb", action="store_true")
    p.add_argument("--out", default="runs/ssl")
    args = p.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    writer = SummaryWriter(args.out) if rank == 0 else None
    if rank == 0 and args.wandb:
        wandb.init(project="ssl", config=vars(args))

    labeled_set = TwoViewImages(4_000, labeled=True)
    unlabeled_set = TwoViewImages(50_000, labeled=False)
    val_set = TwoViewImages(10_000, labeled=True)
    labeled_sampler = DistributedSampler(labeled_set, shuffle=True, seed=args.seed)  # expect: GPU501
    unlabeled_sampler = DistributedSampler(unlabeled_set)  # expect: GPU501
    val_sampler = DistributedSampler(val_set, shuffle=False)  # trap: GPU501
    labeled_loader = DataLoader(labeled_set, batch_size=args.batch_size, sampler=labeled_sampler, **LOADER_KWARGS)  # trap: GPU201
    unlabeled_loader = DataLoader(  # trap: GPU201
        unlabeled_set, batch_size=args.batch_size * args.mu, sampler=unlabeled_sampler, **LOADER_KWARGS
    )
    val_loader = DataLoader(val_set, batch_size=256, sampler=val_sampler, num_workers=4)  # expect: GPU201  # expect: GPU204

    model = DDP(wide_net().to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(unlabeled_loader))

    step = 0
    conf_buffer = []
    for epoch in range(args.epochs):
        model.train()
        for i, ((x_l, y_l), (x_weak, x_strong)) in enumerate(zip(labeled_loader, unlabeled_loader)):
            x_l, y_l = x_l.to(device, non_blocking=True), y_l.to(device, non_blocking=True)
            x_weak = x_weak.to(device, non_blocking=True)
            x_strong = x_strong.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
                logits = model(torch.cat([x_l, x_weak, x_strong]))
                logits_l = logits[: x_l.size(0)]
                logits_w, logits_s = logits[x_l.size(0):].chunk(2)
                loss_sup = F.cross_entropy(logits_l, y_l)
                conf, pseudo = logits_w.detach().softmax(dim=1).max(dim=1)
                mask = (conf >= args.threshold).float()
                loss_unsup = (F.cross_entropy(logits_s, pseudo, reduction="none") * mask).mean()
                loss = loss_sup + args.lambda_u * loss_unsup
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            mask_rate = mask.mean().item()  # expect: GPU101

            if step % args.log_every == 0:
                logger.info("step %d loss %s mask rate %.2f", step, loss, mask_rate)  # expect: GPU102 info
                logger.info("step %d lr %.2e", step, scheduler.get_last_lr()[0])  # trap: GPU102
            if (i + 1) % args.log_every == 0:
                print(f"[{epoch}:{i + 1}] sup={loss_sup.item():.4f}")  # expect: GPU101 info
                print(x_l.shape)  # trap: GPU102
            if rank == 0:
                writer.add_scalar("train/loss", loss, step)  # expect: GPU102
                writer.add_scalar("train/mask_rate", mask_rate, step)  # trap: GPU102
            if dist.get_rank() == 0 and step % args.hist_every == 0:
                conf_buffer.append(conf.cpu())  # expect: GPU103 info
            if step % args.log_every == 0:
                if args.wandb and rank == 0:
                    wandb.log({"train/loss_unsup": loss_unsup}, step=step)  # expect: GPU102 info
                    wandb.log({"train/mask_rate": mask_rate, "epoch": epoch}, step=step)  # trap: GPU102

        # once per epoch, after the batch loop: not a hot path
        torch.cuda.synchronize()  # trap: GPU105
        model.eval()
        correct = torch.zeros((), device=device)
        with torch.no_grad():
            for x, y in val_loader:
                x, y = x.to(device), y.to(device)
                correct += (model(x).argmax(dim=1) == y).sum()
        dist.all_reduce(correct)
        acc = correct.item() / len(val_set)  # trap: GPU101
        if rank == 0:
            logger.info("epoch %d val acc %.4f", epoch, acc)
            writer.add_histogram("train/confidence", torch.cat(conf_buffer), epoch)  # trap: GPU102
            conf_buffer.clear()
            torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))  # expect: GPU503
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
