"""A loop for other projects to drive: the backward helper comes from outside."""

import torch


def fit(model, batches, optimizer, backward_hook):
    for x, y in batches:
        with torch.amp.autocast("cuda"):  # expect: GPU301 info
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        backward_hook(loss, optimizer)
        optimizer.step()
        optimizer.zero_grad()
