HEADS = {}


def register_head(cls):
    HEADS[cls.__name__] = cls
    return cls
