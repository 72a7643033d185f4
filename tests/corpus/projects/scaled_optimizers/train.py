import torch
from torch.utils.data import DataLoader

from lars import LARS
from schedules import WarmupClipper


def init_opt(encoder, lr):
    optimizer = torch.optim.SGD(encoder.parameters(), lr=lr, momentum=0.9)
    return LARS(optimizer, trust_coefficient=0.001)


def main(epochs=100):
    encoder = torch.nn.Linear(128, 10).cuda()
    optimizer = init_opt(encoder, 0.1)
    clipper = WarmupClipper(0.1, 10)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(torch.randn(4096, 128), batch_size=64, pin_memory=True, num_workers=8, persistent_workers=True)
    for epoch in range(epochs):
        for images in loader:
            images = images.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = encoder(images).pow(2).mean()
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        clipper.step(torch.tensor(0.2))


if __name__ == "__main__":
    main()
