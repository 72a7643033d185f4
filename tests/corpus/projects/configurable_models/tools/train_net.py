"""The training entry point: detectron2's trainer builds the registered model on the GPU."""
import torch
from detectron2.config import get_cfg
from detectron2.engine import DefaultTrainer, launch

import segmenter  # noqa: F401


def main(config_file):
    cfg = get_cfg()
    cfg.merge_from_file(config_file)
    cfg.MODEL.DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
    trainer = DefaultTrainer(cfg)
    trainer.resume_or_load(resume=False)
    return trainer.train()


if __name__ == "__main__":
    launch(main, torch.cuda.device_count(), args=("configs/segmenter.yaml",))
