"""A VAE whose decoder draws its own latent only when none is given: training always hands it
one (an operator's result, never None), so the draw runs for the few samples taken after
training, not on every step."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, state_dim, action_dim, latent_dim, device):
        super().__init__()
        self.encoder = nn.Linear(state_dim + action_dim, 2 * latent_dim)
        self.decoder = nn.Linear(state_dim + latent_dim, action_dim)
        self.latent_dim = latent_dim
        self.device = device

    def forward(self, state, action):
        mean, log_std = self.encoder(torch.cat([state, action], 1)).chunk(2, dim=1)
        std = log_std.clamp(-4, 15).exp()
        z = mean + std * torch.randn_like(std)
        return self.decode(state, z), mean, std

    def decode(self, state, z=None):
        if z is None:
            z = torch.randn((state.shape[0], self.latent_dim)).to(self.device).clamp(-0.5, 0.5)  # expect: GPU106 info
        return self.decoder(torch.cat([state, z], 1))

    def sample(self, state):
        return self.decode(state)


class Agent:
    def __init__(self, device):
        self.vae = VAE(2, 2, 4, device).to(device)
        self.optimizer = torch.optim.Adam(self.vae.parameters())
        self.device = device

    def sample_action(self, state):
        with torch.no_grad():
            return self.vae.sample(state.to(self.device)).cpu()  # expect: GPU106 info

    def train(self, replay_buffer, iterations, batch_size=100):
        for it in range(iterations):
            state, action = replay_buffer.sample(batch_size)
            recon, mean, std = self.vae(state, action)
            loss = F.mse_loss(recon, action) + (mean.pow(2) + std.pow(2)).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
