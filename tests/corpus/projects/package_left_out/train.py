import torch
import yaml
import torchvision

import pkg.trainer
from pkg.registry import build


def main():
    data = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=torchvision.transforms.ToTensor())
    loader = torch.utils.data.DataLoader(data, batch_size=128, shuffle=True, num_workers=4, pin_memory=True,
                                         persistent_workers=True)
    model = torchvision.models.resnet18(num_classes=10)
    config = yaml.safe_load(open("configs/train.yaml"))
    trainer = build("trainer", config["trainer"], model=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.train(loader, 10)


if __name__ == "__main__":
    main()
