import pytorch_lightning as pl

from main import Denoiser
from tests.boring import RandomDataModule


def fit_on_gpu():
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=2)
    trainer.fit(Denoiser(None), RandomDataModule())
