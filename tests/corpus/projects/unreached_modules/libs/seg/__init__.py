from .losses import *  # noqa: F401,F403
from .model import Segmentor  # noqa: F401
