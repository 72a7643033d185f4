"""Defaults of every setting; a run merges a YAML file from configs/ into a clone."""

from yacs.config import CfgNode

_C = CfgNode()

_C.NUM_GPUS = 1

_C.TRAIN = CfgNode()
_C.TRAIN.ENABLE = True
_C.TRAIN.BATCH_SIZE = 64
_C.TRAIN.MAX_EPOCH = 30

# Off by default; no shipped config turns it on.
_C.DETECTION = CfgNode()
_C.DETECTION.ENABLE = False

# Off by default; every shipped config turns it on.
_C.LOG = CfgNode()
_C.LOG.EVERY_STEP = False

_C.MULTIGRID = CfgNode()
_C.MULTIGRID.SHORT_CYCLE = False

_C.DATA_LOADER = CfgNode()
_C.DATA_LOADER.NUM_WORKERS = 8
_C.DATA_LOADER.PIN_MEMORY = True


def get_cfg():
    return _C.clone()
