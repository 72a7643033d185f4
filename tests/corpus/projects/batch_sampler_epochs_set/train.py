# The epoch is set in the helper that goes over the loader, on the sampler inside its batch sampler.
import torch
import torch.distributed as dist

from data import create_dataloader


def run_epoch(epoch, model, optimizer, criterion, loader):
    loader.batch_sampler.sampler.set_epoch(epoch)
    for images, labels in loader:
        optimizer.zero_grad()
        criterion(model(images.cuda(non_blocking=True)), labels.cuda(non_blocking=True)).backward()
        optimizer.step()


def main(model, train_set, val_set, epochs):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    optimizer = torch.optim.AdamW(model.parameters())
    train_loader, _ = create_dataloader(train_set, val_set, 32)
    for epoch in range(epochs):
        run_epoch(epoch, model, optimizer, torch.nn.CrossEntropyLoss(), train_loader)
