"""Sampling helpers that only the inference arm of the model's forward runs."""
import torch


class Schedule:
    def __init__(self, betas):
        self.log_alphas = torch.cumsum(torch.log(1 - betas), dim=0)
        self.t_grid = torch.linspace(0.0, 1.0, 100).to(betas.device)  # expect: GPU106 info

    def marginal(self, t):
        return self.log_alphas[(t * 99).long()]


class Sampler:
    def __init__(self, denoise, schedule):
        self.denoise = denoise
        self.schedule = schedule

    def sample(self, x, steps=10):
        times = torch.linspace(1.0, 0.0, steps + 1).to(x.device)  # expect: GPU106 info
        for i in range(steps):
            s, t = times[i], times[i + 1]
            if s.item() - t.item() < 1e-4:
                break
            x = x - self.denoise(x, t) * (s - t)  # expect: GPU601 info
        return x
