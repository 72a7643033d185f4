from .base import Engine
from .softmax import SoftmaxEngine
