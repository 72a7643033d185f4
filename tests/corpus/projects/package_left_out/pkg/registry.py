_REGISTRY = {}


def register(kind, name):
    def add(obj):
        _REGISTRY[(kind, name.lower())] = obj
        return obj
    return add


def build(kind, name, **kwargs):
    return _REGISTRY[(kind, name.lower())](**kwargs)
