import torch.nn.functional as F


def fit(model, optimizer, loader=None):
    """Imported by an import the project's root cannot resolve, which names it all the same."""
    for mel, target in loader:
        loss = F.l1_loss(model(mel.cuda(non_blocking=True)), target.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss.item())  # expect: GPU101
