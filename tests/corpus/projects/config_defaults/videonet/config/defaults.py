"""Defaults of every setting; a run merges its YAML file and command-line overrides into a clone."""

from yacs.config import CfgNode

_C = CfgNode()

_C.NUM_GPUS = 1
_C.PIN_ALWAYS = False

_C.TRAIN = CfgNode()
_C.TRAIN.BATCH_SIZE = 64
_C.TRAIN.MAX_EPOCH = 100

_C.DATA_LOADER = CfgNode()
_C.DATA_LOADER.NUM_WORKERS = 8
_C.DATA_LOADER.PIN_MEMORY = True

# Filled in by `assert_and_infer_cfg` from the machine: nothing can be read from here.
_C.PREFETCH = CfgNode()
_C.PREFETCH.WORKERS = 0
_C.PREFETCH.PIN_MEMORY = True


def assert_and_infer_cfg(cfg):
    import os

    cfg.PREFETCH.WORKERS = os.cpu_count() // 2
    cfg.PREFETCH.PIN_MEMORY = cfg.NUM_GPUS > 0
    return cfg


def get_cfg():
    return _C.clone()
