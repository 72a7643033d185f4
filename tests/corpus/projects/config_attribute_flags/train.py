import sys

import torch
from omegaconf import OmegaConf

import losses


def main(path):
    cfg = OmegaConf.merge(OmegaConf.load(path), OmegaConf.from_cli())
    model = torch.nn.Linear(32, 32).cuda()
    loss_fn = losses.RealValueLoss(coef=1.0, check_nan=cfg.optim.check_nan, log_norms=cfg.optim.log_norms)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.optim.lr)
    for _ in range(1000):
        x = torch.randn(64, 32, device="cuda")
        loss = loss_fn(model(x), x)
        opt.zero_grad()
        loss.backward()  # expect: GPU305 info
        opt.step()


if __name__ == "__main__":
    main(sys.argv[1])
