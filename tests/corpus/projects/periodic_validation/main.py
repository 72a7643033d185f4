import torch

from data import build_loaders


def train_one_epoch(model, loader, optimizer):
    model.train()
    for images, targets in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda(non_blocking=True)), targets.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, loader):
    model.eval()
    correct = 0
    for images, targets in loader:
        correct += (model(images.cuda(non_blocking=True)).argmax(1) == targets.cuda(non_blocking=True)).sum()
    return correct


def main(config, model, optimizer):
    train_loader, val_loader = build_loaders(config.root, config.batch_size)
    model = model.cuda()
    for epoch in range(config.epochs):
        train_one_epoch(model, train_loader, optimizer)
        # Validation costs more than a few worker start-ups: every few epochs, and at the end.
        if epoch % config.save_freq == 0 or epoch >= config.epochs - 10:
            print(epoch, validate(model, val_loader))
