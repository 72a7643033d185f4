import torch


def accuracy(outputs, targets):
    return (outputs.argmax(1) == targets).float().mean().item()  # expect: GPU101


def summarise(history):
    # Runs once, after training, on Python floats.
    values = torch.tensor(history)
    return values.mean().item()
