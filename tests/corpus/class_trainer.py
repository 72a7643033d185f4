"""Object-oriented DDP trainer for a small U-Net segmentation model.

    torchrun --nproc_per_node=4 class_trainer.py
"""
import logging
import os
import time
from dataclasses import asdict, dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader as DL
from torch.utils.data import Dataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter


@dataclass
class TrainConfig:
    epochs: int = 50
    batch_size: int = 16
    lr: float = 3e-4
    weight_decay: float = 1e-4
    num_workers: int = 8
    log_every: int = 20
    num_classes: int = 21
    image_size: int = 256
    out_dir: str = "runs/seg"


class SyntheticSegmentation(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        mask = torch.randint(0, self.num_classes, (self.size // 16, self.size // 16), generator=g)
        mask = mask.repeat_interleave(16, 0).repeat_interleave(16, 1)
        image = torch.randn(3, self.size, self.size, generator=g) + mask[None].float() / self.num_classes
        return image, mask


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),  # expect: GPU704 info, GPU706 info
        nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),  # expect: GPU706 info
    )


class TinyUNet(nn.Module):
    def __init__(self, num_classes, base=32):
        super().__init__()
        self.enc1, self.enc2, self.enc3 = conv_block(3, base), conv_block(base, base * 2), conv_block(base * 2, base * 4)
        self.up2, self.dec2 = nn.ConvTranspose2d(base * 4, base * 2, 2, 2), conv_block(base * 4, base * 2)
        self.up1, self.dec1 = nn.ConvTranspose2d(base * 2, base, 2, 2), conv_block(base * 2, base)
        self.out = nn.Conv2d(base, num_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.out(d1)


def dice_score(logits, target, num_classes, eps=1e-6):
    probs = logits.softmax(dim=1)
    onehot = F.one_hot(target, num_classes).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum(dim=(0, 2, 3))
    union = probs.sum(dim=(0, 2, 3)) + onehot.sum(dim=(0, 2, 3))
    return ((2 * inter + eps) / (union + eps)).mean()


class Trainer:
    def __init__(self, cfg: TrainConfig):
        self.cfg = cfg
        self.rank = dist.get_rank()
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))  # trap: GPU101
        self.device = torch.device(f"cuda:{self.local_rank}")
        torch.cuda.set_device(self.device)
        self.logger = logging.getLogger(f"trainer.rank{self.rank}")

        train_set = SyntheticSegmentation(20_000, cfg.image_size, cfg.num_classes)
        val_set = SyntheticSegmentation(1_000, cfg.image_size, cfg.num_classes)
        self.sampler = DistributedSampler(train_set, seed=0)  # expect: GPU501
        self.val_sampler = DistributedSampler(val_set, shuffle=False)  # trap: GPU501
        self.train_loader = DL(  # expect: GPU201, GPU204
            train_set, batch_size=cfg.batch_size, sampler=self.sampler, num_workers=cfg.num_workers, drop_last=True
        )
        self.val_loader = DL(val_set, batch_size=cfg.batch_size, sampler=self.val_sampler, pin_memory=True)  # trap: GPU201

        model = TinyUNet(cfg.num_classes).to(self.device)
        self.model = DDP(model, device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=cfg.epochs)
        self.writer = SummaryWriter(cfg.out_dir) if self.rank == 0 else None
        self.epoch = 0
        self.global_step = 0
        self.dice_history = []
        self.last_pred = None

    def train_epoch(self):
        self.model.train()
        epoch_loss = torch.zeros((), device=self.device)
        n_batches = 0
        for images, masks in self.train_loader:
            images = images.to(self.device, non_blocking=True)
            masks = masks.to(self.device, non_blocking=True)
            self.optimizer.zero_grad(set_to_none=True)
            with autocast():  # expect: GPU301  # expect: GPU303
                logits = self.model(images)
                loss = F.cross_entropy(logits, masks)
            loss.backward()
            self.optimizer.step()
            torch.cuda.synchronize(self.device)  # expect: GPU105
            epoch_loss += loss.detach()
            n_batches += 1
            self.global_step += 1
            self.last_pred = logits.detach().argmax(dim=1)[0].to("cpu")  # expect: GPU103
            batch_dice = dice_score(logits.detach().float(), masks, self.cfg.num_classes)
            self.dice_history.append(batch_dice.item())  # expect: GPU101
            if self.rank == 0 and self.global_step % self.cfg.log_every == 0:
                self.logger.info(f"step {self.global_step} loss {loss}")  # expect: GPU102 info
                self.writer.add_scalar("train/lr", self.optimizer.param_groups[0]["lr"], self.global_step)  # trap: GPU102
        return (epoch_loss / max(n_batches, 1)).item()  # trap: GPU101

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        total, dice_sum, n = 0.0, 0.0, 0
        for images, masks in self.val_loader:
            images, masks = images.to(self.device), masks.to(self.device)  # expect: GPU203 info
            logits = self.model(images)
            total += F.cross_entropy(logits, masks).item()  # trap: GPU101
            dice_sum += float(dice_score(logits, masks, self.cfg.num_classes))  # trap: GPU101
            n += 1
        return total / max(n, 1), dice_sum / max(n, 1)

    def save_checkpoint(self):
        state = {
            "epoch": self.epoch,
            "model": self.model.state_dict(),  # expect: GPU503
            "optimizer": self.optimizer.state_dict(),  # trap: GPU503
            "config": asdict(self.cfg),
        }
        torch.save(state, os.path.join(self.cfg.out_dir, "last.pt"))

    def export_weights(self, path):
        cpu_state = {k: v.cpu() for k, v in self.model.module.state_dict().items()}  # trap: GPU103, GPU503
        torch.save(cpu_state, path)

    def fit(self):
        start = time.time()
        while self.epoch < self.cfg.epochs:
            train_loss = self.train_epoch()
            val_loss, val_dice = self.validate()
            self.scheduler.step()
            if self.rank == 0:
                self.logger.info("epoch %d train %.4f val %.4f dice %.3f", self.epoch, train_loss, val_loss, val_dice)  # trap: GPU102
                self.writer.add_scalar("val/dice", val_dice, self.epoch)
                self.save_checkpoint()
            self.epoch += 1
        torch.cuda.synchronize()  # trap: GPU105
        elapsed = time.time() - start
        if self.rank == 0:
            self.logger.info("training finished in %.1f min", elapsed / 60)
            self.export_weights(os.path.join(self.cfg.out_dir, "weights.pt"))


def main():
    logging.basicConfig(level=logging.INFO)
    dist.init_process_group("nccl")
    cfg = TrainConfig()
    os.makedirs(cfg.out_dir, exist_ok=True)
    Trainer(cfg).fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
