class Registry:
    def __init__(self):
        self._classes = {}

    def register(self):
        def add(cls):
            self._classes[cls.__name__] = cls
            return cls
        return add

    def from_dict(self, cfg):
        cfg = dict(cfg)
        return self._classes[cfg.pop("name")](**cfg)


LOSSES = Registry()
