"""A voice model whose forward trains with `infer=False` and samples otherwise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from sampler import Sampler, Schedule


class Denoiser(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.net = nn.Linear(dims, dims)

    def forward(self, x, t):
        return self.net(x)


class Diffusion(nn.Module):
    def __init__(self, dims, steps=100):
        super().__init__()
        self.denoise = Denoiser(dims)
        self.register_buffer("betas", torch.linspace(1e-4, 0.02, steps))

    def forward(self, cond, target=None, infer=True, method="euler"):
        if not infer:
            t = torch.rand(cond.shape[0], device=cond.device)
            noise = torch.randn_like(target)
            return F.mse_loss(self.denoise(target + noise, t), noise)
        else:
            schedule = Schedule(self.betas)
            sampler = Sampler(self.denoise, schedule)
            return sampler.sample(torch.randn_like(cond))


class VoiceModel(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.encoder = nn.Linear(dims, dims)
        self.decoder = Diffusion(dims)

    def forward(self, units, target=None, infer=True):
        x = self.encoder(units)
        return self.decoder(x, target=target, infer=infer)


class FastVoiceModel(VoiceModel):
    pass
