"""The training script scales the loss whenever it builds the detector with amp on."""
import torch

from model import Detector


def train(config, loader):
    net = Detector(amp=config.amp).cuda()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
    scaler = torch.cuda.amp.GradScaler(enabled=config.amp)  # expect: GPU303
    for images, maps in loader:
        loss = torch.nn.functional.mse_loss(net(images.cuda(non_blocking=True)), maps.cuda(non_blocking=True))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
