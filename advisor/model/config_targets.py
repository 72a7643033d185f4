"""Classes built from a dotted path that a config file writes: `get_obj_from_str(config["target"])
(**config["params"])` of latent-diffusion code, or a `get_class(conf.get_string("model_class"))`
that imports the module and walks `getattr` down the path. Which class a run builds is decided
by the config it is given; the ones the project ships name those it can be."""

from __future__ import annotations

from typing import FrozenSet, Optional

import libcst as cst

from advisor.model.facts import Context

_IMPORTERS = frozenset({"importlib.import_module"})


def configured_classes(model) -> FrozenSet[tuple]:
    """The project classes whose dotted path some config file of the project writes, as (model,
    ClassInfo) pairs, resolved once per file."""
    return model.shared("configured-classes", _configured)


def _configured(model) -> FrozenSet[tuple]:
    project = model.project
    if project is None:
        return frozenset()
    found = set()
    for path in project.configured_class_paths():
        symbol = model.symbol(path)
        if symbol is not None and symbol.kind == "class":
            found.add((symbol.model, symbol.info))
    return frozenset(found)


def looks_up_imported(model, call: cst.Call, ctx: Context, order: float) -> bool:
    """`getattr(importlib.import_module(module), name)`, or `getattr(m, part)` where `m` is bound
    to such an import (`m = __import__(module)`) in the same function, with a name given at run
    time: a class (or any attribute) of a module picked by a string."""
    func = call.func
    if type(func) is not cst.Name or func.value != "getattr" or model.imports.qualify(func) is not None:
        return False
    if len(call.args) < 2 or any(a.keyword is not None or a.star for a in call.args[:2]):
        return False
    if type(call.args[1].value) is cst.SimpleString:
        return False
    held = call.args[0].value
    if _imports_module(model, held):
        return True
    if type(held) is not cst.Name:
        return False
    return any(
        a.value is not None and _imports_module(model, a.value)
        for a in model.assignments(held.value, ctx)
    )


def _imports_module(model, value: Optional[cst.BaseExpression]) -> bool:
    if type(value) is not cst.Call:
        return False
    func = value.func
    if type(func) is cst.Name and func.value == "__import__" and model.imports.qualify(func) is None:
        return True
    return model.imports.qualify(func) in _IMPORTERS
