"""GPUs a script makes visible to itself: `os.environ["CUDA_VISIBLE_DEVICES"] = "0"` at the top
of the module, before torch starts CUDA. Such a run sees that many devices whatever the machine
has, so `torch.cuda.device_count()` is that number and a multi-GPU branch never runs."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from advisor.model.literals import literal_values
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
    two), or with an option whose every shipped value is one (`--gpu_id` defaulting to `"1"`); None
    when it sets none, or sets it from a value not known."""
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
            if type(value) is cst.SimpleString and isinstance(value.evaluated_value, str):
                found = _count(value.evaluated_value)
                continue
            # `= args.gpu_id`: what the run passes, known when every value the option takes as
            # shipped (its default, the launch scripts' values) is a written list of ids.
            store = next((st for st in model.facts.item_stores.get("os.environ", ()) if st.value is value), None)
            if store is None:
                return None
            texts = literal_values(model, value, store.ctx, store.order)
            # A launch line's `--gpu_id 0` reads as a number: one id all the same.
            if not texts.complete or not texts.values or any(kind not in ("str", "int") for kind, _ in texts.values):
                return None
            found = max(_count(str(text)) for _, text in texts.values)
    return found


def _count(ids: str) -> int:
    return len([part for part in ids.split(",") if part.strip()])
