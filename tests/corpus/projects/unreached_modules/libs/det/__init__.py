from .losses import *  # noqa: F401,F403
from .registry import LOSSES  # noqa: F401
