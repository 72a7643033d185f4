import torch.nn.functional as F


def search_one_epoch(model, loader, optimizer):
    """A module of a package the scripts import from, left out by every import."""
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item())  # expect: GPU101 info
