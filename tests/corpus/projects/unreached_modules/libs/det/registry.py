LOSSES = {}


def register(cls):
    LOSSES[cls.__name__] = cls
    return cls
