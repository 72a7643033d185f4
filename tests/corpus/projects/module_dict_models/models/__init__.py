from .builder import build_model
from .detector import TextDetector

__all__ = ["TextDetector", "build_model"]
