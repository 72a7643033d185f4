"""Framework calls that hand their arguments back wrapped, in order: `accelerator.prepare(model,
optimizer, train_loader)` returns the same three, ready for the run (the loader keeps its
options: workers, pinning, batch size); `fabric.setup_dataloaders(a, b)` does the same for
loaders. What the value flow asks about element i of the result is asked about argument i."""

from __future__ import annotations

import re
from typing import List, Optional

import libcst as cst

from advisor.model.names import dotted_name, last_segment

_WRAPPING_METHODS = frozenset({"prepare", "prepare_data_loader", "setup_dataloaders"})
_FRAMEWORK_OBJECT = re.compile(r"(^|_)(accelerator|fabric)$", re.IGNORECASE)


# Opacus's `privacy_engine.make_private(module=, optimizer=, data_loader=)` hands back the three
# wrapped: the loader as a `DPDataLoader` that keeps the original's workers and pinning (and
# draws its own sampler).
PRIVACY_WRAPPERS = frozenset({"make_private", "make_private_with_epsilon"})
_PRIVACY_PARTS = ("module", "optimizer", "data_loader")


def wrapped_arguments(model, call: cst.Call) -> Optional[List[cst.BaseExpression]]:
    """The arguments ``call`` hands back (None when it is not such a call, or they cannot be
    told apart: a `*args` or a keyword)."""
    func = call.func
    if type(func) is cst.Attribute and func.attr.value in PRIVACY_WRAPPERS and model.imports.imports_any("opacus"):
        return _privacy_parts(call)
    if type(func) is not cst.Attribute or func.attr.value not in _WRAPPING_METHODS:
        return None
    if not _FRAMEWORK_OBJECT.search(last_segment(dotted_name(func.value))):
        return None
    if not model.imports.imports_any("accelerate", "lightning", "lightning_fabric"):
        return None
    if not call.args or any(a.star or a.keyword is not None for a in call.args):
        return None
    return [a.value for a in call.args]


def keeps_batches(model, call: cst.Call) -> bool:
    """The wrapper hands the loader's batches on as the loader makes them (Opacus's, unlike
    Accelerate's `prepare`, which moves them to the device): a question about raw batches goes
    through it too."""
    func = call.func
    return type(func) is cst.Attribute and func.attr.value in PRIVACY_WRAPPERS and model.imports.imports_any("opacus")


def _privacy_parts(call: cst.Call) -> Optional[List[cst.BaseExpression]]:
    if any(a.star for a in call.args):
        return None
    parts: List[Optional[cst.BaseExpression]] = [None, None, None]
    positional = [a for a in call.args if a.keyword is None]
    for index, arg in enumerate(positional[:3]):
        parts[index] = arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _PRIVACY_PARTS:
            parts[_PRIVACY_PARTS.index(arg.keyword.value)] = arg.value
    return None if any(p is None for p in parts) else parts
