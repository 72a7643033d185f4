import argparse
import json

import torch

from models import Generator

parser = argparse.ArgumentParser()
parser.add_argument("--ngpu", type=int, default=1, help="number of GPUs to use")
parser.add_argument("--nz", type=int, default=100)

if __name__ == "__main__":
    opt = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    net = Generator(opt.nz, int(opt.ngpu)).cuda()
    with open("generator_config.json", "w") as f:
        json.dump({"nz": opt.nz, "ngpu": opt.ngpu}, f)
    optimizer = torch.optim.RMSprop(net.parameters(), lr=5e-5)
    for step in range(100000):
        fake = net(torch.randn(64, opt.nz, 1, 1, device="cuda"))
        loss = -fake.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
