"""Trains the detector a config names, with the OpenMMLab runner."""
import argparse

from mmcv import Config
from mmdet3d.apis import train_model
from mmdet3d.datasets import build_dataset
from mmdet3d.models import build_model

import plugin  # noqa: F401  (registers the project's classes)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    args = parser.parse_args()
    cfg = Config.fromfile(args.config)
    model = build_model(cfg.model).cuda()
    datasets = [build_dataset(cfg.data.train)]
    train_model(model, datasets, cfg, distributed=False)


if __name__ == "__main__":
    main()
