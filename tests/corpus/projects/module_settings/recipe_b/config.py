"""Another recipe's settings, whose worker count the training script sets again."""
from easydict import EasyDict as edict

C = edict()
config = C
C.batch_size = 16
C.num_workers = 8
C.nepochs = 40


def update_workers(count):
    config.num_workers = count
