"""Settings a Hydra script's primary config file gives. A script decorated with
`@hydra.main(config_path=".", config_name="main.yaml")` runs with the settings of that YAML file
unless its command line overrides them, as an argparse script runs with its defaults:
`cfg.algorithm.device` is what the file's `algorithm:` / `  device:` says.

The primary file and the other YAML files of its folder and below (a run may name one with
`--config-name`) are read, by indentation (no defaults list, no interpolation): a setting the
primary file does not give, or some file gives as `${...}`, is not known.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional

import libcst as cst

from advisor.model.names import dotted_name

HYDRA_MAIN = "hydra.main"


def primary_configs(model) -> Dict[str, str]:
    """{name of the config parameter: path of the primary config file} for the file's
    `@hydra.main(...)` functions whose config file exists. Worked out once per file."""
    return model.shared("hydra-configs", _primary_configs)


def _primary_configs(model) -> Dict[str, str]:
    found: Dict[str, str] = {}
    if model.real_path is not None and model.project is not None:
        for info in model.facts.functions.values():
            if HYDRA_MAIN not in info.decorators or not info.params:
                continue
            path = _config_path(model, info.node)
            if path is not None:
                found.setdefault(info.params[0], path)
    return found


def _config_path(model, node: cst.FunctionDef) -> Optional[str]:
    for decorator in node.decorators:
        call = decorator.decorator
        if type(call) is not cst.Call or model.imports.qualify(call.func) != HYDRA_MAIN:
            continue
        folder, name = ".", None
        for arg in call.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if type(arg.value) is not cst.SimpleString:
                continue
            text = str(arg.value.evaluated_value)
            if keyword == "config_path":
                folder = text
            elif keyword == "config_name":
                name = text
        if name is None or folder.startswith(("pkg:", "file:")):
            return None
        if not name.endswith((".yaml", ".yml")):
            name += ".yaml"
        path = os.path.normpath(os.path.join(os.path.dirname(model.real_path), folder, name))
        return path if os.path.isfile(path) else None
    return None


def hydra_values(model, expr: cst.BaseExpression) -> Optional[List[str]]:
    """The values the configs of the file's Hydra script give the setting ``expr``
    reads (`cfg.algorithm.device` with `cfg` the parameter of the `@hydra.main` function, or
    the same name handed on), without quotes; None when the file has no such script, the
    expression is no setting of it, or the file does not give it a plain value."""
    name = dotted_name(expr)
    if name is None or "." not in name:
        return None
    configs = primary_configs(model)
    if not configs:
        return None
    root, _, setting = name.partition(".")
    path = configs.get(root)
    if path is None:
        return None
    # Any config beside it or below its folder is a run too (`--config-name benchmark/mujoco`).
    siblings = model.project.layout.config_files()
    if siblings is None:
        return None
    folder = os.path.dirname(path) + os.sep
    values = [v.strip("'\"") for config in siblings if config.endswith((".yaml", ".yml")) and config.startswith(folder)
              for v in model.project.yaml_setting(config, setting)]
    if not model.project.yaml_setting(path, setting) or any(v.startswith("${") or not v for v in values):
        return None
    return values
