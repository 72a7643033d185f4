"""Model classes found by file name and built by the name the options give."""

import importlib
import os

_folder = os.path.dirname(os.path.abspath(__file__))
_names = [f[:-3] for f in os.listdir(_folder) if f.endswith("_model.py")]
_modules = [importlib.import_module(f"models.{name}") for name in _names]


def create_model(opt):
    for module in _modules:
        cls = getattr(module, opt["model_type"], None)
        if cls is not None:
            return cls(opt)
    raise ValueError(f"model {opt['model_type']} not found")
