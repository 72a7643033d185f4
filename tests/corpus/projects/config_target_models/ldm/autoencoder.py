import torch
import torch.nn as nn


class Autoencoder(nn.Module):
    def __init__(self, channels=64, kl_weight=1e-6):
        super().__init__()
        self.encoder = nn.Conv2d(3, 2 * channels, 3, padding=1)
        self.decoder = nn.Conv2d(channels, 3, 3, padding=1)
        self.kl_weight = kl_weight
        self.kl_history = []

    def forward(self, x):  # expect: GPU701 info
        mean, logvar = self.encoder(x).chunk(2, dim=1)
        z = mean + torch.randn_like(mean) * (0.5 * logvar).exp()
        kl = 0.5 * (mean.pow(2) + logvar.exp() - 1 - logvar).mean()
        rec = (self.decoder(z) - x).abs().mean()
        self.kl_history.append(kl.item())  # expect: GPU101
        return rec + self.kl_weight * kl


class VectorQuantizer(nn.Module):
    """Kept for an older experiment: no config names it."""

    def __init__(self, n_codes=512, dim=64):
        super().__init__()
        self.codebook = nn.Embedding(n_codes, dim)

    def forward(self, z):
        distances = torch.cdist(z.flatten(2).transpose(1, 2), self.codebook.weight[None])
        codes = distances.argmin(-1)
        # trap: GPU104 warning (no config builds this class)
        print("codes in use:", codes.unique().numel())  # expect: GPU104 info
        return self.codebook(codes)
