import torch

from configs.train import conf
from tools.utils_tool import init_criterion


def main():
    device = torch.device("cuda")
    model = torch.nn.Conv2d(3, 2, 3).to(device)  # expect: GPU704 info
    criterion = init_criterion(conf["criterion"], device)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(conf["epochs"]):
        for images, masks in loader:
            loss = criterion(model(images.to(device, non_blocking=True)), masks.to(device, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
