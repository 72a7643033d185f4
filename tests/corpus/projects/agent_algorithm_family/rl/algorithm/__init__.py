# The algorithms an agent spec can name.
from .ppo import *
from .reinforce import *
