import math

import torch


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(0, half, dtype=torch.float32) / half).to(timesteps.device)  # expect: GPU106
    args = timesteps[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


def position_table(length, dim):
    position = torch.arange(length).float().cuda()  # expect: GPU106 info
    return position[:, None].expand(length, dim)
