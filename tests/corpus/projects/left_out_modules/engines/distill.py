import torch.nn.functional as F


def distill_one_epoch(model, loader, optimizer):
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item())  # expect: GPU101
