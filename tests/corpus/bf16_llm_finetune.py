"""Continued pre-training of a small GPT-style language model in bfloat16 with DDP.

bf16 has the same exponent range as fp32, so no GradScaler is needed.

    torchrun --nproc_per_node=8 bf16_llm_finetune.py --data-dir data/openwebtext
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

AMP_DTYPE = torch.bfloat16


class TokenChunks(Dataset):
    """Fixed-length windows over a flat uint16 token file."""

    def __init__(self, path, block_size):
        self.data = np.memmap(path, dtype=np.uint16, mode="r")
        self.block_size = block_size

    def __len__(self):
        return (len(self.data) - 1) // self.block_size

    def __getitem__(self, i):
        start = i * self.block_size
        chunk = torch.from_numpy(self.data[start:start + self.block_size + 1].astype(np.int64))
        return chunk[:-1], chunk[1:]


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=50304, block_size=1024, dim=768, layers=12, heads=12):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block_size, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def get_lr(it, args):
    if it < args.warmup_iters:
        return args.lr * (it + 1) / args.warmup_iters
    progress = min(1.0, (it - args.warmup_iters) / max(1, args.lr_decay_iters - args.warmup_iters))
    return args.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (args.lr - args.min_lr)


@torch.no_grad()
def estimate_val_loss(model, loader, device, max_batches):
    model.eval()
    losses = torch.zeros(max_batches, device=device)
    for k, (x, y) in enumerate(loader):
        if k >= max_batches:
            break
        x, y = x.to(device), y.to(device)  # expect: GPU203 info
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):  # trap: GPU301
            logits = model(x)
        losses[k] = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    model.train()
    return losses.mean().item()  # trap: GPU101


@torch.no_grad()
def sample(model, idx, max_new_tokens, temperature=0.8):
    for _ in range(max_new_tokens):
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):  # trap: GPU301  # expect: GPU303
            logits = model(idx[:, -model.block_size:])[:, -1, :] / temperature  # expect: GPU604 info
        nxt = torch.multinomial(F.softmax(logits.float(), dim=-1), num_samples=1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default="data/openwebtext")
    p.add_argument("--out-dir", default="out")
    p.add_argument("--block-size", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=12)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--min-lr", type=float, default=6e-5)
    p.add_argument("--warmup-iters", type=int, default=2000)
    p.add_argument("--lr-decay-iters", type=int, default=600000)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--log-interval", type=int, default=10)
    p.add_argument("--eval-batches", type=int, default=200)
    args = p.parse_args()

    dist.init_process_group(backend="nccl")
    ddp_rank = dist.get_rank()
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    master_process = ddp_rank == 0
    torch.backends.cuda.matmul.allow_tf32 = True

    train_ds = TokenChunks(os.path.join(args.data_dir, "train.bin"), args.block_size)
    val_ds = TokenChunks(os.path.join(args.data_dir, "val.bin"), args.block_size)
    train_loader = DataLoader(  # trap: GPU201  # expect: GPU204
        train_ds,
        batch_size=args.batch_size,
        sampler=DistributedSampler(train_ds, drop_last=True),  # trap: GPU501
        num_workers=4,
        pin_memory=torch.cuda.is_available(),
    )
    val_loader = DataLoader(  # trap: GPU201
        val_ds,
        batch_size=args.batch_size,
        sampler=DistributedSampler(val_ds, shuffle=False),  # trap: GPU501
        pin_memory=torch.cuda.is_available(),
    )

    model = TinyGPT(block_size=args.block_size).to(device)
    model = DDP(model, device_ids=[ddp_local_rank])
    raw_model = model.module
    optimizer = torch.optim.AdamW(raw_model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)

    it = 0
    t0 = time.time()
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        for x, y in train_loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            lr = get_lr(it, args)
            for group in optimizer.param_groups:
                group["lr"] = lr
            with torch.autocast("cuda", dtype=AMP_DTYPE):  # trap: GPU301
                logits = model(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
            if bool(torch.isnan(loss)):  # expect: GPU101
                raise FloatingPointError(f"NaN loss at iteration {it}")
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

            if it % args.log_interval == 0 and master_process:
                torch.cuda.synchronize()  # trap: GPU105
                t1 = time.time()
                dt = (t1 - t0) / args.log_interval
                t0 = t1
                lossf = loss.item()  # expect: GPU101 info
                print(f"iter {it}: loss {lossf:.4f}, lr {lr:.2e}, {dt * 1000:.1f} ms/iter")  # trap: GPU102
            it += 1

        val_loss = estimate_val_loss(model, val_loader, device, args.eval_batches)
        if master_process:
            print(f"epoch {epoch}: val loss {val_loss:.4f} ppl {math.exp(val_loss):.1f}")  # trap: GPU102
            ckpt = {
                "model": raw_model.state_dict(),  # trap: GPU503
                "optimizer": optimizer.state_dict(),
                "iter": it,
                "config": vars(args),
            }
            torch.save(ckpt, os.path.join(args.out_dir, "ckpt.pt"))

    if master_process:
        start = torch.zeros((1, 1), dtype=torch.long, device=device)
        tokens = sample(raw_model, start, 64)[0].tolist()  # trap: GPU103
        print(tokens)  # trap: GPU102
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
