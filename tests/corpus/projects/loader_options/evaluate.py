"""Entry point for evaluation: the hook may turn pinning off, so nothing is known about it."""

from training.evaluate import evaluate
from utils.easydict import EasyDict


def apply_overrides(cfg, overrides=()):
    for key, value in overrides:
        cfg[key] = value


def main(model, dataset):
    cfg = EasyDict(dataset=dataset)
    cfg.loader_kwargs = EasyDict(pin_memory=True, num_workers=2)
    apply_overrides(cfg.loader_kwargs)
    return evaluate(model, **cfg)
