"""detectron2-style: a function adds the backbone's settings to the node it is handed."""

from yacs.config import CfgNode as CN


def add_swin_config(cfg):
    _C = cfg
    _C.MODEL = CN()
    _C.MODEL.SWIN = CN()
    _C.MODEL.SWIN.DEPTH = 4
    _C.MODEL.SWIN.USE_CHECKPOINT = False
    _C.MODEL.SWIN.RECOMPUTE_HEAD = False
