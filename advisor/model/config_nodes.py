"""Defaults of yacs-style config nodes. A module of the project builds the node and fills it at
its top level (`_C = CfgNode()`, `_C.DATA_LOADER = CfgNode()`, `_C.DATA_LOADER.NUM_WORKERS = 8`;
also with the project's own subclass of yacs' node, `config = ConfigNode()`);
the run reads a clone of it (`get_cfg()`), merged with a YAML file or command-line overrides
and handed from function to function, as `cfg.DATA_LOADER.NUM_WORKERS`.

What the defaults module sets is what runs unless the run's config says otherwise, as an
argparse default is: the answer names the setting (``Literals.option``). Only settings two or
more levels deep (`DATA_LOADER.NUM_WORKERS`) or one level in upper case (`WORKERS`, not `lr`)
are read, and a setting stored
anywhere else in the project (`cfg.DATA_LOADER.NUM_WORKERS = 0` in a setup function, a second
default) is not known.
"""

from __future__ import annotations

import os
import re
from typing import Dict, Optional, Tuple

import libcst as cst

from advisor.model.constants import UNKNOWN, Literals
from advisor.model.facts import MODULE_SCOPE, Assignment
from advisor.model.names import dotted_name
from advisor.model.value_flow import Question, ValueFlow

_NODE_CLASSES = frozenset({"yacs.config.CfgNode", "fvcore.common.config.CfgNode", "detectron2.config.CfgNode"})


def _defaults(owner) -> Dict[str, Optional[Assignment]]:
    """{"DATA_LOADER.NUM_WORKERS": its top-level assignment (None when set twice)} for one
    module: the settings of the config nodes it builds at its top level."""
    roots = set()
    module = [(name, found) for (scope, name), found in owner.facts.assignments.items() if scope == MODULE_SCOPE]
    for name, found in module:
        for assignment in found:
            value = assignment.value
            if "." in name or value is None or assignment.index is not None:
                continue
            if type(value) is cst.Call and _node_class(owner, value.func):
                roots.add(name)
    for name, found in module:  # `cfg = _C`
        if "." not in name and any(type(a.value) is cst.Name and a.value.value in roots for a in found):
            roots.add(name)
    out: Dict[str, Optional[Assignment]] = {}
    for name, found in module:
        root, _, path = name.partition(".")
        if root not in roots or not _setting_path(path):
            continue
        plain = [a for a in found if a.value is not None and a.index is None and not a.augmented]
        out[path] = plain[0] if len(plain) == 1 and len(found) == 1 and path not in out else None
    for path, assignment in _added_defaults(owner):
        out[path] = assignment if path not in out else None
    return out


def _added_defaults(owner):
    """(path, assignment) for the settings a module-level function adds to the config node it
    is handed (detectron2's `def add_swin_config(cfg): cfg.MODEL.SWIN = CN();
    cfg.MODEL.SWIN.USE_CHECKPOINT = False`): a function that builds a node on its parameter."""
    by_scope: Dict[str, list] = {}
    for (scope, name), found in owner.facts.assignments.items():
        if scope != MODULE_SCOPE:
            by_scope.setdefault(scope, []).append((name, found))
    for info in owner.facts.functions.values():
        stores = by_scope.get(info.scope)
        if not stores or info.class_name is not None or not info.params:
            continue
        for param in info.params:
            # `_C = cfg` at the top of the function: the same node under another name.
            names = {param} | {name for name, found in stores if "." not in name and all(
                type(a.value) is cst.Name and a.value.value == param for a in found)}
            mine = [(name, found) for name, found in stores if name.partition(".")[0] in names and "." in name]
            if not any(type(a.value) is cst.Call and _node_class(owner, a.value.func) for _, found in mine for a in found):
                continue
            for name, found in mine:
                path = name.partition(".")[2]
                if not _setting_path(path):
                    continue
                plain = [a for a in found if a.value is not None and a.index is None and not a.augmented]
                if len(plain) == 1 and len(found) == 1:
                    yield path, plain[0]


def _setting_path(path: str) -> bool:
    """A setting read by its path alone: two or more levels deep (`DATA_LOADER.NUM_WORKERS`),
    or one level in yacs' upper-case style (`WORKERS`, `PIN_MEMORY`); a lower-case single name
    (`cfg.lr`) is read from too many other objects."""
    return "." in path or (path.isupper() and len(path) > 2)


def _node_class(owner, func: cst.BaseExpression) -> bool:
    """A config-node class: yacs' (or fvcore's) own, or a class of the project derived from one
    (`class ConfigNode(yacs.config.CfgNode)` in `config_node.py`)."""
    qual = owner.imports.qualify(func)
    if qual in _NODE_CLASSES:
        return True
    if qual is None:
        info = owner.facts.classes.get(dotted_name(func) or "")
        return info is not None and any(base in _NODE_CLASSES for base in info.bases)
    symbol = owner.symbol(qual)
    return symbol is not None and symbol.kind == "class" and any(base in _NODE_CLASSES for base in symbol.info.bases)


def _project_defaults(model) -> Dict[str, Tuple[object, Optional[Assignment]]]:
    out: Dict[str, Tuple[object, Optional[Assignment]]] = {}
    for owner in model.project.config_modules():
        for path, assignment in owner.shared("config-node-defaults", _defaults).items():
            out[path] = (owner, assignment) if path not in out else (owner, None)
    return out


def config_default(flow: ValueFlow, question: Question[Literals], expr: cst.Attribute) -> Optional[Literals]:
    """What `cfg.DATA_LOADER.NUM_WORKERS` holds by default, when a config module of the project
    sets that setting; None when none does."""
    model = flow.model
    name = dotted_name(expr)
    if model.project is None or name is None or "." not in name or not _setting_path(name.partition(".")[2]):
        return None
    defaults = model.shared("config-node-defaults-project", _project_defaults)
    if not defaults:
        return None
    path = name.partition(".")[2]
    found = defaults.get(path)
    if found is None:
        return None
    owner, assignment = found
    if assignment is None or _stored_elsewhere(model, path):
        return UNKNOWN
    answer = owner.values.ask(question, assignment.value, assignment.ctx, assignment.order)
    return Literals(answer.values, answer.complete, name)


def left_off(model, option: Optional[str]) -> bool:
    """``option`` is a setting of the project's config nodes (`cfg.MODEL.SWIN.USE_CHECKPOINT`)
    that no config file or launch script of the project sets to anything but a false value: a
    run as the project ships it keeps the default (a user may still pass it on the command
    line, which is why only a false default counts, and only to lower a finding)."""
    if option is None or model.project is None or "." not in option:
        return False
    path = option.partition(".")[2]
    if path not in model.shared("config-node-defaults-project", _project_defaults):
        return False
    return not model.project.sets_in_configs(path)


def _stored_elsewhere(model, path: str) -> bool:
    """The project stores the setting more than once (its default is one store). Only the files
    this check depends on are searched (the cache re-checks it when one of them changes), so
    that a cached answer and a fresh one always agree."""
    store = re.compile(r"\." + re.escape(path) + r"\s*(?:=(?!=)|[-+*/|&]=)")
    nearby = model.shared("config-node-nearby", _nearby_files)
    count = 0
    for other in model.project.files_containing("." + path):
        if _normal(other) in nearby:
            count += len(store.findall(model.project.text_of(other)))
    return count != 1


def _nearby_files(model) -> frozenset:
    if model.real_path is None:
        return frozenset()
    own = _normal(model.real_path)
    return frozenset(map(_normal, model.project.dependencies(own))) | {own}


def _normal(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))
