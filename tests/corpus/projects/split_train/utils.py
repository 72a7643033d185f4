"""Helpers used by train.py."""

import os

import torch
import torch.distributed as dist


def accuracy(logits, target):
    return (logits.argmax(dim=1) == target).float().mean().item()  # expect: GPU101


class NativeScaler:
    """Loss scaling for fp16 in one call (wraps torch's GradScaler)."""

    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()  # expect: GPU303

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
        self._scaler.update()


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def save_checkpoint(model, path):
    # trap: GPU504 (every caller is guarded by the rank-0 check)
    torch.save(model.state_dict(), os.path.join(path, "last.pt"))  # expect: GPU503


def log_metrics(step, loss, every=100):
    if step % every != 0:
        return
    # trap: GPU102 (the early return leaves this to one step in `every`)
    print(f"step {step}: loss {loss:.4f}")  # expect: GPU102 info
