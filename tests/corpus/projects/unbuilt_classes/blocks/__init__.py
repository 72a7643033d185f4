from .extra import GatedConv, SqueezeExcite
