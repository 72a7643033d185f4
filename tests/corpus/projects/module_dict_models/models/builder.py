import models


def build_model(cfg):
    params = {key: value for key, value in cfg.items() if key != "type"}
    return models.__dict__[cfg["type"]](**params)
