import sys

import hydra.utils
import lightning as L
import omegaconf
import torch


def train(config_path):
    config = hydra.utils.instantiate(omegaconf.OmegaConf.load(config_path))
    model = config.model
    data = torch.utils.data.DataLoader(torch.randn(4096, 256), batch_size=config.data.batch_size,
                                       num_workers=4, pin_memory=True, persistent_workers=True)
    trainer = L.Trainer(**config.trainer)
    trainer.fit(model, data)


if __name__ == "__main__":
    train(sys.argv[1])
