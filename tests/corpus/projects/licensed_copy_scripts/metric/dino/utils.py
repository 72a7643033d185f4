"""Helpers of the copied self-supervised training code."""
import torch


def clip_gradients(model, clip):
    norms = []
    for p in model.parameters():
        if p.grad is not None:
            norm = p.grad.data.norm(2)
            norms.append(norm.item())
            if norm > clip:
                p.grad.data.mul_(clip / (norm + 1e-6))
    return norms


def trunc_normal_(tensor, std=0.02):
    with torch.no_grad():
        return tensor.normal_(0, std).clamp_(-2 * std, 2 * std)
