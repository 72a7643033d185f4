import torch
from torchvision import datasets, transforms


def create_dataloader(config):
    train_dataset = datasets.CIFAR10("data", train=True, transform=transforms.ToTensor())
    val_dataset = datasets.CIFAR10("data", train=False, transform=transforms.ToTensor())
    train_loader = torch.utils.data.DataLoader(  # expect: GPU201 info, GPU204
        train_dataset,
        batch_size=config.train.batch_size,
        shuffle=True,
        num_workers=config.train.dataloader.num_workers,
        pin_memory=config.train.dataloader.pin_memory,
    )
    val_loader = torch.utils.data.DataLoader(  # expect: GPU204
        val_dataset,
        batch_size=config.validation.batch_size,
        num_workers=config.validation.dataloader.num_workers,
        pin_memory=config.validation.dataloader.pin_memory,
    )
    return train_loader, val_loader
