"""A variant trainer: it hands its own arguments on to the base class, in order."""
from core.trainer import *
from core.trainer import Trainer as _Trainer


class Trainer(_Trainer):
    def __init__(self, name, model, optimizer, local_rank=0, world_size=1, workspace="workspace"):
        super().__init__(name, model, optimizer, local_rank, world_size, workspace)
