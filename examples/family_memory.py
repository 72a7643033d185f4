"""GPU memory and gradient bookkeeping in a small language-model training script.

Shows: GPU401, GPU402, GPU403, GPU405, GPU406

Activation checkpointing saves memory on the transformer blocks, and gradients are
accumulated over several micro-batches to reach a larger effective batch. Along the way the
script leaves gradients allocated and zero-filled, keeps every step's autograd graph alive
in a running total, empties the allocator cache on every step, leaves `use_reentrant`
unspecified, and forgets to divide the loss by the accumulation count.
family_memory_fixed.py is the same script with each of these addressed.

    python examples/family_memory.py --epochs 2 --accum-steps 4
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset


class TinyLM(nn.Module):
    def __init__(self, vocab=4096, dim=384, layers=6, context=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(context, dim))
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, nhead=6, dim_feedforward=4 * dim, batch_first=True, norm_first=True)
            for _ in range(layers)
        )
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.size(1)]
        for block in self.blocks:
            x = checkpoint(block, x)
        return self.head(x)


def make_dataset(n=20_000, context=257, vocab=4096):
    g = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randint(0, vocab, (n, context), generator=g))


def main():
    parser = argparse.ArgumentParser(description="tiny LM with checkpointing and accumulation")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--accum-steps", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()

    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    loader = DataLoader(
        make_dataset(), batch_size=16, shuffle=True, num_workers=2, pin_memory=True, persistent_workers=True
    )
    model = TinyLM().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)

    for epoch in range(args.epochs):
        model.train()
        total_loss = 0.0
        for i, (batch,) in enumerate(loader):
            batch = batch.to(device, non_blocking=True)
            logits = model(batch[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
            loss.backward()
            if (i + 1) % args.accum_steps == 0:
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=False)
            total_loss += loss
            torch.cuda.empty_cache()
        print(f"epoch {epoch}: mean loss {float(total_loss) / len(loader):.4f}")


if __name__ == "__main__":
    main()
