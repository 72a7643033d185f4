import json

import torch

from models import Generator

if __name__ == "__main__":
    with open("generator_config.json") as f:
        config = json.load(f)
    net = Generator(config["nz"], config["ngpu"]).cuda()
    with torch.no_grad():
        images = net(torch.randn(16, config["nz"], 1, 1, device="cuda"))
