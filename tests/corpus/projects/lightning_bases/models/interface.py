import pytorch_lightning as pl
import torch


class LitModel(pl.LightningModule):
    def gather(self, outputs, key):
        return torch.cat([o[key] for o in outputs])


class PlainModel(torch.nn.Module):
    """Not a LightningModule: nothing calls its subclasses' `training_step`."""
