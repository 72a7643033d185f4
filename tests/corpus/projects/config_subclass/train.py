import torch
import torch.nn.functional as F

from imgcls.config import get_default_config
from imgcls.dataloader import create_dataloader


def train(epoch, model, optimizer, loader, device):
    model.train()
    for data, targets in loader:
        data = data.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        loss = F.cross_entropy(model(data), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    for data, targets in loader:
        model(data.to(device, non_blocking=True))


def main(model):
    config = get_default_config()
    device = torch.device("cuda")
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader, val_loader = create_dataloader(config)
    for epoch in range(90):
        train(epoch, model, optimizer, train_loader, device)
        validate(model, val_loader, device)
