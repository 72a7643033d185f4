# A Python 2 package: its class has the name of its module, and the star import binds the
# class over the submodule.
from .clips import *
