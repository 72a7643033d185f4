"""Blocks built by name from a config: the value flow sees no construction of them."""
from models.blocks import Adapter, Block

MODELS = {"adapter": Adapter, "block": Block}


def build(cfg):
    kind = cfg.pop("type")
    return MODELS[kind](**cfg)
