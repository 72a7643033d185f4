from .config import cfg, set_cfg
