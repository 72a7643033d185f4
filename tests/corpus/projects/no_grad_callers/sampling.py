"""Sampling loops that leave autograd to their callers."""
import torch


def denoise(model, latents, timesteps):
    for t in timesteps:
        latents = latents - model(latents, torch.full((latents.shape[0],), t, device=latents.device))
    return latents


def generate_image(model, shape, steps, device):
    latents = torch.randn(shape, device=device)
    return denoise(model, latents, torch.linspace(1, 0, steps))


def preview(model, shape, steps, device):
    kept = []
    latents = torch.randn(shape, device=device)
    for t in torch.linspace(1, 0, steps):
        kept.append(model(latents, torch.full((shape[0],), float(t), device=device)))  # expect: GPU601 info
    return kept
