import torch
import torch.distributed as dist
import torch.nn.functional as F

from data import create_dataloader


def train(epoch, model, optimizer, loader):
    model.train()
    for data, targets in loader:
        data = data.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        loss = F.cross_entropy(model(data), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, loader):
    model.eval()
    for data, targets in loader:
        model(data.cuda(non_blocking=True))


def main(model, train_set, val_set, epochs):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader, val_loader = create_dataloader(train_set, val_set, 64)
    for epoch in range(epochs):
        train(epoch, model, optimizer, train_loader)
        validate(model, val_loader)
