"""The large model's settings: it turns checkpointing on for its adapter."""
from models import build

LARGE = dict(type="adapter", dim=1024, depth=24, with_cp=True)


def large_model():
    return build(dict(LARGE))
