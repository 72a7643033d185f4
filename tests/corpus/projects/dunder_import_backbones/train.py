import sys

import torch

from models.model import load_generator


def main(cfg):
    generator = load_generator(cfg).cuda()
    optimizer = torch.optim.Adam(generator.parameters(), lr=2e-4)
    for step in range(cfg.steps):
        z = torch.randn(64, cfg.z_dim, device="cuda")
        loss = generator(z).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1])
