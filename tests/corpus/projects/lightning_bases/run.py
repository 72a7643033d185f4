import pytorch_lightning as pl

from models.nerf import LitNeRF


def main(datamodule):
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=250000)
    trainer.fit(LitNeRF(), datamodule)
