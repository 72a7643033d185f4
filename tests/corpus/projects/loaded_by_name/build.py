"""Builds objects from a config's dotted `target`, as latent-diffusion-style codebases do."""

import importlib


def instantiate(config):
    module, _, name = config["target"].rpartition(".")
    return getattr(importlib.import_module(module), name)(**config.get("params", {}))
