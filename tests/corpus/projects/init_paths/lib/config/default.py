"""Defaults of the run's settings; the run merges its YAML file into them."""
from yacs.config import CfgNode as CN

_C = CN()
_C.WORKERS = 4
_C.PIN_MEMORY = True
_C.TRAIN = CN()
_C.TRAIN.BATCH_SIZE = 32
_C.TRAIN.EPOCHS = 140


def update_config(cfg, args):
    cfg.defrost()
    cfg.merge_from_file(args.cfg)
    cfg.freeze()
