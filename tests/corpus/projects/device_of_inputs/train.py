import torch

from contrast.losses import InfoNCE, SmoothedCE


def train(encoder, head, loader, epochs, device):
    # The device comes from the command line; no file of the project names it.
    encoder.to(device)
    criterion, ce = InfoNCE(), SmoothedCE()
    optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
    for _ in range(epochs):
        for view_a, view_b, target in loader:
            view_a, view_b, target = view_a.to(device), view_b.to(device), target.to(device)
            za, zb = encoder(view_a), encoder(view_b)
            loss = criterion(za, zb) + ce(head(za), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
