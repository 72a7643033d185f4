import torch.nn.functional as F


def pretrain_one_epoch(model, loader, optimizer):
    """Kept beside the engine the scripts import, imported by nothing and named nowhere: none
    of it runs."""
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item())  # expect: GPU101 info
