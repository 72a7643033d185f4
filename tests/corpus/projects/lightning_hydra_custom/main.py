import hydra
import hydra.utils
import lightning as L
import torch

from model import Denoiser


@hydra.main(config_path="configs", config_name="config", version_base=None)
def main(config):
    model = Denoiser(config.model.hidden)
    data = torch.utils.data.DataLoader(torch.randn(4096, config.model.hidden), batch_size=64,
                                       num_workers=4, pin_memory=True, persistent_workers=True)
    trainer = hydra.utils.instantiate(config.trainer)
    trainer.fit(model, data)


if __name__ == "__main__":
    main()
