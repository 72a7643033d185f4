"""The package re-exports its factory."""
from .detr import build_detr
