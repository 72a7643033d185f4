"""Step functions built by factories that return a function they define, as score-based
diffusion code does: the training loop calls the returned closure, not a name the file
defines."""

import torch


def step_fn(values):
    """A helper of the same name as the factory's closure below, used by no training code: the
    calls of the factory's result must still find the closure."""
    return values.sum().item()


def get_loss_fn(noise_level):
    def loss_fn(model, batch):
        noisy = batch + noise_level * torch.randn_like(batch)
        loss = (model(noisy) - batch).pow(2).mean()
        print(f"loss {loss.item():.4f}")  # expect: GPU101
        return loss

    return loss_fn


def get_step_fn(noise_level, optimizer):
    loss_fn = get_loss_fn(noise_level)

    def step_fn(model, batch):
        loss = loss_fn(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return step_fn


def get_report_fn(noise_level):
    def report_fn(model, batch):
        with torch.no_grad():
            error = (model(batch + noise_level) - batch).abs().mean()
        return error.item()

    return report_fn
