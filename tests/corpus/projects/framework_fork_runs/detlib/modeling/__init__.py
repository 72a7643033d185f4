# import every architecture
from .retina import Retina
from .fcos import Fcos
