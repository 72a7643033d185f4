"""Builds objects from a config's dotted `target`, as latent-diffusion-style codebases do."""

import importlib


def get_obj_from_str(string):
    module, _, name = string.rpartition(".")
    return getattr(importlib.import_module(module), name)


def instantiate_from_config(config):
    return get_obj_from_str(config["target"])(**config.get("params", {}))
