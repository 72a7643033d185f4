"""A recipe's settings: an attribute dict filled at the top of its module."""
from easydict import EasyDict as edict

C = edict()
config = C
C.batch_size = 16
C.num_workers = 24
C.nepochs = 80
C.eval_workers = 0
