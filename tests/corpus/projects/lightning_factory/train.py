import hydra
import hydra.utils
import lightning as L
import torch

from build import build_model


@hydra.main(config_path="configs", config_name="train", version_base=None)
def main(config):
    L.seed_everything(0)
    model = build_model(config)
    data = torch.utils.data.DataLoader(torch.load("train.pt"), batch_size=64, num_workers=4,
                                       pin_memory=True, persistent_workers=True)
    trainer = hydra.utils.instantiate(config.trainer)
    trainer.fit(model, data)


if __name__ == "__main__":
    main()
