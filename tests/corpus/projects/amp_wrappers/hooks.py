"""A loop for other projects to drive: the backward helper comes from outside."""

import torch


def fit(model, batches, optimizer, backward_hook):
    for x, y in batches:
        with torch.amp.autocast("cuda"):  # expect: GPU301 info
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        backward_hook(loss, optimizer)
        optimizer.step()
        optimizer.zero_grad()


def fit_logged(model, batches, optimizer, log_fn, every=100):
    """The loss goes to backward here; the callable from outside only logs it."""
    for step, (x, y) in enumerate(batches):
        with torch.amp.autocast("cuda"):  # expect: GPU301
            loss = torch.nn.functional.l1_loss(model(x.cuda()), y.cuda())
        loss.backward()
        log_fn(loss, step)
        optimizer.step()
        optimizer.zero_grad()
