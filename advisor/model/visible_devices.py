"""GPUs a script makes visible to itself: `os.environ["CUDA_VISIBLE_DEVICES"] = "0"` at the top
of the module, before torch starts CUDA. Such a run sees that many devices whatever the machine
has, so `torch.cuda.device_count()` is that number and a multi-GPU branch never runs."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from advisor.model.names import dotted_name

_VARIABLE = "CUDA_VISIBLE_DEVICES"


def _environ_key(model, target: cst.BaseExpression) -> Optional[str]:
    if type(target) is not cst.Subscript or len(target.slice) != 1:
        return None
    if model.imports.qualify(target.value) != "os.environ" and dotted_name(target.value) != "os.environ":
        return None
    index = target.slice[0].slice
    if type(index) is not cst.Index or type(index.value) is not cst.SimpleString:
        return None
    key = index.value.evaluated_value
    return key if isinstance(key, str) else None


def pinned_device_count(model) -> Optional[int]:
    """How many GPUs the module-level code pins as visible with a literal (`"0"`: one, `"0,1"`:
    two); None when it sets none, or sets it from anything but a literal (an option)."""
    return model.shared("pinned-device-count", _pinned)


def _pinned(model) -> Optional[int]:
    found: Optional[int] = None
    for statement in model.module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is not cst.Assign or len(small.targets) != 1:
                continue
            if _environ_key(model, small.targets[0].target) != _VARIABLE:
                continue
            value = small.value
            if type(value) is not cst.SimpleString or not isinstance(value.evaluated_value, str):
                return None  # `= args.gpu`: whatever the run passes
            ids = [part for part in value.evaluated_value.split(",") if part.strip()]
            found = len(ids)
    return found
