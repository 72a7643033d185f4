class Registry:
    def __init__(self, name):
        self.name = name
        self.classes = {}

    def register_module(self, name=None):
        def add(cls):
            self.classes[name or cls.__name__] = cls
            return cls
        return add

    def build(self, cfg):
        cfg = dict(cfg)
        return self.classes[cfg.pop("type")](**cfg)


MODELS = Registry("models")
BACKBONES = Registry("backbones")
LOSSES = Registry("losses")
