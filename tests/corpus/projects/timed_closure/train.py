"""Self-supervised training: each step is a closure timed on the GPU by a helper."""

import threading

import torch
import torch.nn.functional as F

from utils.logging import AverageMeter, gpu_timer, grad_norms


def main(encoder, predictor, loader, optimizer, scaler, epochs):
    loss_meter = AverageMeter()

    def snapshot(step):
        torch.save(encoder.state_dict(), f"step{step}.pt")

    for epoch in range(epochs):
        for itr, (imgs, masks) in enumerate(loader):
            imgs = imgs.cuda(non_blocking=True)

            def train_step():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    z = predictor(encoder(imgs, masks), masks)
                    loss = F.smooth_l1_loss(z, imgs.detach())
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                norms = grad_norms(encoder.named_parameters())
                optimizer.zero_grad()
                return float(loss), norms  # expect: GPU101

            def save_preview():
                torch.save({"loss": loss_meter.sum / max(loss_meter.count, 1)}, "preview.pt")

            (loss, norms), elapsed = gpu_timer(train_step)
            loss_meter.update(loss)
            threading.Thread(target=save_preview).start()
            if itr % 1000 == 0:
                snapshot(itr)
