import argparse

import torch
import torchvision

from engine.trainer import Trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--epoch_step", type=int, default=500)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    transform = torchvision.transforms.ToTensor()
    train_set = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=transform)
    test_set = torchvision.datasets.CIFAR10("data", train=False, download=True, transform=transform)
    trainer = Trainer(args, torchvision.models.resnet18(num_classes=10), train_set, test_set)
    for epoch in range(args.epochs):
        trainer.train_epoch()
        trainer.validate()


if __name__ == "__main__":
    main()
