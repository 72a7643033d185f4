"""The loop: the helper class zeroes the gradients on every step."""

import torch

from fp16_helpers import HalfTrainer, reset_probe


def train(model, probe, batches, opt, device):
    reset_probe(probe.parameters())
    trainer = HalfTrainer(model)
    for x, y in batches:
        trainer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
        trainer.scaled(loss).backward()
        opt.step()
