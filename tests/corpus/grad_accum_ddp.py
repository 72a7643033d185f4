"""Masked-token pre-training of a small Transformer encoder with gradient accumulation.

DDP gradient all-reduce is skipped (model.no_sync()) on the micro-steps that do not
end an accumulation window; the optimizer steps every --accum-steps micro-batches.

    torchrun --nproc_per_node=8 grad_accum_ddp.py --micro-batch 16 --accum-steps 8
"""
import argparse
import contextlib
import math
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from tqdm.auto import tqdm


class RandomMaskedTokens(Dataset):
    def __init__(self, n, seq_len=256, vocab=32000, mask_id=4, mask_prob=0.15):
        self.n, self.seq_len, self.vocab = n, seq_len, vocab
        self.mask_id, self.mask_prob = mask_id, mask_prob

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        tokens = torch.randint(5, self.vocab, (self.seq_len,), generator=g)
        mask = torch.rand(self.seq_len, generator=g) < self.mask_prob
        labels = torch.where(mask, tokens, torch.full_like(tokens, -100))
        return tokens.masked_fill(mask, self.mask_id), labels


class Encoder(nn.Module):
    def __init__(self, vocab=32000, dim=512, layers=8, heads=8, seq_len=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, seq_len, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.lm_head(self.encoder(self.emb(tokens) + self.pos[:, : tokens.size(1)]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--micro-batch", type=int, default=16)
    p.add_argument("--accum-steps", type=int, default=8)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--debug", action="store_true")
    p.add_argument("--out-dir", default="ckpt")
    args = p.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    dataset = RandomMaskedTokens(2_000_000)
    sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=rank)  # expect: GPU501
    loader = DataLoader(dataset, batch_size=args.micro_batch, sampler=sampler, num_workers=4, pin_memory=False)  # expect: GPU201  # expect: GPU204

    model = Encoder().to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    accum = args.accum_steps
    total_opt_steps = args.epochs * math.ceil(len(loader) / accum)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 1000) * max(0.0, 1 - s / total_opt_steps))

    opt_step = 0
    tokens_seen = 0
    for epoch in range(args.epochs):
        model.train()
        micro_losses = []
        running = 0.0
        pbar = tqdm(loader, disable=rank != 0, desc=f"epoch {epoch}")
        for i, (tokens, labels) in enumerate(pbar):
            tokens = tokens.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            tokens_seen += int(tokens.numel())  # trap: GPU101
            is_update = (i + 1) % accum == 0
            ctx = contextlib.nullcontext() if is_update else model.no_sync()
            with ctx:
                with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
                    logits = model(tokens)
                    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1)) / accum
                loss.backward()
            torch.cuda.synchronize()  # expect: GPU105
            micro_losses.append(loss.detach().cpu().numpy())  # expect: GPU103
            pbar.set_postfix(loss=loss)  # expect: GPU102
            loss_val = loss.item() * accum  # expect: GPU101
            running += loss_val
            if args.debug:
                print(loss_val)  # trap: GPU102

            if (i + 1) % accum == 0:
                grad_norm = nn.utils.clip_grad_norm_(model.parameters(), args.clip)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                opt_step += 1
                gn = grad_norm.item()  # expect: GPU101
                if rank == 0:
                    print(f"opt step {opt_step} grad_norm {gn:.3f} avg loss {running / accum:.4f}")  # trap: GPU102
                running = 0.0

        epoch_loss = float(np.mean(micro_losses)) * accum  # trap: GPU101
        if rank == 0:
            print(f"epoch {epoch}: loss {epoch_loss:.4f}, {tokens_seen} tokens seen")  # trap: GPU102
            ckpt = {
                "model": model.state_dict(),  # expect: GPU503
                "optimizer": optimizer.state_dict(),  # trap: GPU503
                "scheduler": scheduler.state_dict(),
                "epoch": epoch,
                "opt_step": opt_step,
                "args": vars(args),
            }
            torch.save(ckpt, os.path.join(args.out_dir, f"ckpt_{epoch}.pt"))
        dist.barrier()  # trap: GPU105
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
