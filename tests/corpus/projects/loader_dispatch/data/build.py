import torch
from torchvision import datasets, transforms


def build_loader(config):
    transform = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    dataset_train = datasets.ImageFolder(config.DATA.TRAIN_PATH, transform)
    dataset_val = datasets.ImageFolder(config.DATA.VAL_PATH, transform)
    sampler_train = torch.utils.data.DistributedSampler(dataset_train, shuffle=True)
    data_loader_train = torch.utils.data.DataLoader(  # expect: GPU204
        dataset_train,
        sampler=sampler_train,
        batch_size=config.DATA.BATCH_SIZE,
        num_workers=8,
        pin_memory=True,
        drop_last=True,
    )
    data_loader_val = torch.utils.data.DataLoader(  # expect: GPU204
        dataset_val,
        batch_size=config.DATA.BATCH_SIZE,
        shuffle=False,
        num_workers=8,
        pin_memory=True,
    )
    return dataset_train, dataset_val, data_loader_train, data_loader_val
