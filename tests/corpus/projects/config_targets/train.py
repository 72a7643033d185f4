import sys

import torch
import yaml

from build import instantiate_from_config


def main(config_path):
    torch.backends.cudnn.benchmark = True
    with open(config_path) as f:
        config = yaml.safe_load(f)
    model = torch.nn.Conv2d(3, 4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = instantiate_from_config(config["loss"])
    for step in range(1000):
        images = torch.randn(8, 3, 32, 32, device="cuda")
        target = torch.randint(0, 4, (8, 32, 32), device="cuda")
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1])
