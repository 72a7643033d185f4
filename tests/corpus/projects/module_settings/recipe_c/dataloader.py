"""The same loader, over settings a YAML file may change when the run starts."""
from torch.utils import data

from config import config


def get_train_loader(dataset):
    return data.DataLoader(dataset, batch_size=config.batch_size, num_workers=config.num_workers,
                           drop_last=True, pin_memory=True)
