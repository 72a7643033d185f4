import torch
from torchvision import datasets, transforms


def build_pretrain_loader(config):
    dataset = datasets.ImageFolder(config.DATA.TRAIN_PATH, transforms.ToTensor())
    dataloader = torch.utils.data.DataLoader(
        dataset, batch_size=config.DATA.BATCH_SIZE, num_workers=8, pin_memory=True, persistent_workers=True
    )
    return dataloader
