from .backbones import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .segmentor import Segmentor  # noqa: F401
