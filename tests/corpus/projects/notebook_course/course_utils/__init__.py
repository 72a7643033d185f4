from .training import *
