# A dispatcher of loader builders with different return shapes: the caller that unpacks four
# names can only get the builders that return four.
from .build import build_loader as _build_loader
from .pretrain import build_pretrain_loader


def build_loader(config, pretrain=False):
    if not pretrain:
        return _build_loader(config)
    return build_pretrain_loader(config)
