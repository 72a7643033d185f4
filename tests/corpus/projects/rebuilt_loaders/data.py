import torch
from torch.utils.data import DataLoader, TensorDataset


def make_train_loader(batch_size):
    dataset = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, pin_memory=True, num_workers=8)  # expect: GPU204


def make_eval_loader(batch_size):
    dataset = TensorDataset(torch.randn(1024, 32), torch.randint(0, 10, (1024,)))
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, num_workers=8)


def make_probe_loader(batch_size):
    dataset = TensorDataset(torch.randn(512, 32), torch.randint(0, 10, (512,)))
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, num_workers=8)  # expect: GPU204
