import torch
from torch.cuda.amp import autocast


def train_joint(loader, model, optimizer, grad_scalar, amp=True):
    model.train()
    for x in loader:
        x = x.cuda(non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with autocast(enabled=amp):  # expect: GPU303
            loss = model(x).pow(2).mean()
        grad_scalar.scale(loss).backward()
        grad_scalar.step(optimizer)
        grad_scalar.update()

