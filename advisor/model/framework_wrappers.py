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


def wrapped_arguments(model, call: cst.Call) -> Optional[List[cst.BaseExpression]]:
    """The arguments ``call`` hands back (None when it is not such a call, or they cannot be
    told apart: a `*args` or a keyword)."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in _WRAPPING_METHODS:
        return None
    if not _FRAMEWORK_OBJECT.search(last_segment(dotted_name(func.value))):
        return None
    if not model.imports.imports_any("accelerate", "lightning", "lightning_fabric"):
        return None
    if not call.args or any(a.star or a.keyword is not None for a in call.args):
        return None
    return [a.value for a in call.args]
