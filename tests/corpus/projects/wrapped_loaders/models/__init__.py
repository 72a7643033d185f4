import importlib

from models.base_model import BaseModel


def create_model(opt):
    module = importlib.import_module("models." + opt.model + "_model")
    for name, cls in module.__dict__.items():
        if name.lower() == opt.model + "model" and issubclass(cls, BaseModel):
            return cls(opt)
    raise ValueError(opt.model)
