import json
import sys
from types import SimpleNamespace

import torch

from optimization.loss import build_loss


def main(path):
    with open(path) as f:
        cfg = SimpleNamespace(**json.load(f))
    model = torch.nn.Linear(512, 256).cuda()
    loss_fn = build_loss(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(cfg.epochs):
        for video, text in loader:
            loss = loss_fn(model(video.cuda(non_blocking=True)), model(text.cuda(non_blocking=True)))
            optimizer.zero_grad()
            loss.backward()  # expect: GPU305 info
            optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1])
