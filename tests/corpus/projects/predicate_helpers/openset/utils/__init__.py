from .labels import *
