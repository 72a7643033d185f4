import torch


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n


def train_one_epoch(model, loader, optimizer, loss_fn, args):
    losses = AverageMeter()
    model.train()
    for input, target in loader:
        input, target = input.cuda(non_blocking=True), target.cuda(non_blocking=True)
        loss = loss_fn(model(input), target)
        if not args.distributed:
            losses.update(loss.item(), input.size(0))  # expect: GPU101 info
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses.sum / max(losses.count, 1)
