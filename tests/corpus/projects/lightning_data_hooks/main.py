"""Entry script: the Trainer and its module; the data module comes from the YAML config."""
import argparse
import importlib

import pytorch_lightning as pl
import torch.nn.functional as F
from omegaconf import OmegaConf
from pytorch_lightning import Trainer


def instantiate_from_config(config):
    module, cls = config["target"].rsplit(".", 1)
    return getattr(importlib.import_module(module), cls)(**config.get("params", {}))


class Denoiser(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def training_step(self, batch, batch_idx):
        noisy, clean = batch
        return F.mse_loss(self.net(noisy), clean)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="configs/train.yaml")
    parser.add_argument("--gpus", default="0,")
    opt = parser.parse_args()
    config = OmegaConf.load(opt.base)
    trainer = Trainer(accelerator="gpu", devices=opt.gpus, max_epochs=100)
    trainer.fit(instantiate_from_config(config.model), instantiate_from_config(config.data))
