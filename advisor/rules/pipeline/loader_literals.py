"""The literal options of a DataLoader call as plain JSON values: what the pipeline rules put in
a finding's `loader_options` field, for the runtime probes (advisor/runtime/site.py) to run the
loader as the user wrote it."""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

import libcst as cst

from advisor.model.file_model import call_argument
from advisor.model.names import is_none

# (keyword, position in DataLoader's signature, None: keyword-only)
_VALUES: Tuple[Tuple[str, Optional[int]], ...] = (
    ("batch_size", 1), ("shuffle", 2), ("num_workers", 5), ("pin_memory", 7), ("drop_last", 8),
    ("prefetch_factor", None), ("persistent_workers", None),
)
_GIVEN = (("sampler", 3), ("batch_sampler", 4))  # only whether one is passed: True
_UNKNOWN = object()


def plain_literal(expr: cst.BaseExpression) -> Any:
    """The value of None, a bool, an int that fits 64 bits, a finite float or a str written as a
    literal (a sign allowed on numbers); _UNKNOWN for anything else (bytes, complex numbers,
    containers, names, calls), which a probe cannot take as JSON."""
    if type(expr) is cst.Name and expr.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[expr.value]
    if type(expr) is cst.UnaryOperation and type(expr.operator) in (cst.Minus, cst.Plus):
        inner = plain_literal(expr.expression)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if type(expr.operator) is cst.Minus else inner
        return _UNKNOWN
    if not type(expr) in (cst.Integer, cst.Float, cst.SimpleString):
        return _UNKNOWN
    try:
        value = expr.evaluated_value
    except (ValueError, SyntaxError, MemoryError):  # an int past the digit limit, a bad escape
        return _UNKNOWN
    if isinstance(value, int):
        return value if abs(value) < 2 ** 63 else _UNKNOWN
    if isinstance(value, float):
        return value if math.isfinite(value) else _UNKNOWN
    return value if isinstance(value, str) else _UNKNOWN


def loader_options(call: cst.Call) -> Dict[str, Any]:
    """The DataLoader arguments given as plain literals, by keyword or position (positions are
    not trusted after a `*args`); `sampler`/`batch_sampler` as True when one is passed."""
    positional = not any(arg.star == "*" for arg in call.args)
    out: Dict[str, Any] = {}
    for keyword, position in _GIVEN:
        arg = call_argument(call, keyword, position if positional else None)
        if arg is not None and not is_none(arg.value):
            out[keyword] = True
    for keyword, position in _VALUES:
        arg = call_argument(call, keyword, position if positional else None)
        value = _UNKNOWN if arg is None else plain_literal(arg.value)
        if value is not _UNKNOWN:
            out[keyword] = value
    return out
