"""A small name -> constructor registry, as config-driven projects keep one."""


class Registry:
    def __init__(self):
        self._builders = {}

    def register(self, name):
        def wrap(fn):
            self._builders[name] = fn
            return fn
        return wrap

    def build(self, cfg):
        return self._builders[cfg.name](**cfg.kwargs)


REGISTRY = Registry()
