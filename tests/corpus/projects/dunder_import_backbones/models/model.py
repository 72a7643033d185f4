"""Builds the backbone a config names: `models.<backbone>` loaded with `__import__`."""


def load_generator(cfg):
    module = __import__("models.{backbone}".format(backbone=cfg.backbone), fromlist=["something"])
    return module.Generator(cfg.z_dim)
