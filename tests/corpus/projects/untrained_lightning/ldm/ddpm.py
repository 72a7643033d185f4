"""A diffusion LightningModule copied in for its sampler: the project never trains it."""
import pytorch_lightning as pl
import torch


class DDPM(pl.LightningModule):
    def __init__(self, unet):
        super().__init__()
        self.unet = unet

    def training_step(self, batch, batch_idx):
        noise = torch.randn_like(batch)
        loss = torch.nn.functional.mse_loss(self.unet(batch + noise), noise)
        self.log("loss", loss.item())
        return loss

    @torch.no_grad()
    def sample(self, shape):
        x = torch.randn(shape, device=self.device)
        for _ in range(50):
            x = x - self.unet(x)
        return x
