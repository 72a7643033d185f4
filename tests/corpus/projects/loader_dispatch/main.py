import torch
import torch.distributed as dist

from data import build_loader


def train_one_epoch(model, criterion, data_loader, optimizer, epoch):
    model.train()
    for samples, targets in data_loader:
        samples = samples.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, data_loader):
    model.eval()
    correct = 0
    for images, target in data_loader:
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        correct += (model(images).argmax(1) == target).sum()
    return correct


def main(config, model, criterion, optimizer):
    dist.init_process_group("nccl")
    dataset_train, dataset_val, data_loader_train, data_loader_val = build_loader(config)
    model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    for epoch in range(config.TRAIN.EPOCHS):
        data_loader_train.sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, data_loader_train, optimizer, epoch)
        validate(model, data_loader_val)
