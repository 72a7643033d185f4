from .posenet import posenet

__all__ = ["posenet"]
