import pytorch_lightning as pl
import torch

from models.interface import LitModel, PlainModel


class LitNeRF(LitModel):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 4)

    def training_step(self, batch, batch_idx):
        rays, target = batch
        loss = (self.net(rays) - target).pow(2).mean()
        psnr = -10.0 * torch.log10(loss)
        self.log("train/loss", loss.item(), on_step=True)  # expect: GPU101
        self.log("train/psnr", psnr.item(), on_step=True)  # expect: GPU101
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=5e-4)


class SketchNeRF(PlainModel):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 4)

    def training_step(self, batch, batch_idx):
        rays, target = batch
        loss = (self.net(rays) - target).pow(2).mean()
        print(loss.item())
        return loss
