"""Input gradients for the training step and for a robustness report: backward gives the
gradient with respect to the input only."""
import numpy as np
import torch
import torch.nn.functional as F


def input_grad(model, x, y, eps):
    delta = (torch.rand_like(x) * 2 - 1) * eps
    delta.requires_grad = True
    loss = F.cross_entropy(model(x + delta), y)
    grad = torch.autograd.grad(loss, delta, create_graph=True)[0]
    return grad


def gradient_report(model, batches, eps):
    grads = []
    for x, y in batches:
        x, y = x.cuda(), y.cuda()
        delta = torch.zeros_like(x, requires_grad=True)
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        grads.append(delta.grad.detach().cpu().numpy())  # expect: GPU103 info
        print(loss.item())  # expect: GPU101 info
        delta.grad.zero_()
    return np.vstack(grads)
