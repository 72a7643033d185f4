from .det import LOSSES


def build_loss(name):
    return LOSSES[name]()
