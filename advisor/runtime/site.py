"""What the static analysis knows about a finding's site, as probe parameters (no torch).

The rule put what it found in the finding's fields (`finding.data`): the literal options of the
DataLoader it reported (`loader_options`: batch_size, num_workers, ...), GPU406's accumulation
step count (`accum_steps`), GPU301's autocast dtype (`dtype`). A finding without loader options
(one whose rule looks at no DataLoader, such as GPU401's `zero_grad`) borrows a literal batch
size from the DataLoader calls of its file, read with the standard `ast` module. Anything not
literal is left out, and the probe's documented default applies. Only plain literals
(None, a bool, an int, a finite float or a str) are kept: parameters travel as JSON to the
probe's process and into the result cache's key.
"""

from __future__ import annotations

import ast
import math
from typing import Any, Dict, Optional, Sequence

from advisor.findings import Finding

_LOADER_KEYS = ("batch_size", "shuffle", "num_workers", "pin_memory", "drop_last", "prefetch_factor",
                "persistent_workers")
_PRESENCE_KEYS = ("sampler", "batch_sampler")


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _loader_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) == "DataLoader":
            yield node


def _literal_kwargs(call: ast.Call) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg in _PRESENCE_KEYS:
            if not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                out[kw.arg] = True
            continue
        if kw.arg in _LOADER_KEYS:
            value = _plain_literal(kw.value)
            if value is not _UNKNOWN:
                out[kw.arg] = value
    return out


_UNKNOWN = object()


def _plain_literal(node: ast.expr) -> Any:
    """The value of a plain literal keyword value, or _UNKNOWN for anything else: `...`,
    bytes, complex numbers, containers (`{[]: 1}` does not even evaluate), names, calls."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _plain_literal(node.operand)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
        return _UNKNOWN
    if not isinstance(node, ast.Constant):
        return _UNKNOWN
    value = node.value
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2 ** 63 else _UNKNOWN  # JSON and the probes take machine integers
    if isinstance(value, float) and math.isfinite(value):
        return value
    return _UNKNOWN


def _contains(node: ast.AST, row: int, col: int) -> bool:
    start = (node.lineno, node.col_offset + 1)
    end = (getattr(node, "end_lineno", node.lineno), (getattr(node, "end_col_offset", 0) or 0) + 1)
    return start <= (row, col) <= end


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def site_params(finding: Finding, lines: Optional[Sequence[str]] = None, tree: Optional[ast.AST] = None) -> Dict[str, Any]:
    """Parameters for the finding's probe, from its fields; `tree` is the parsed file (None: no
    DataLoader facts beyond the finding's own)."""
    params: Dict[str, Any] = {}
    data = finding.data
    options = data.get("loader_options")
    if isinstance(options, dict):
        if finding.code == "GPU205":
            params["kwargs"] = dict(options)
        if _count(options.get("batch_size")):
            params["batch_size"] = options["batch_size"]
    elif tree is not None:
        row, col = finding.start.row, finding.start.column
        loaders = list(_loader_calls(tree))
        here = [c for c in loaders if _contains(c, row, col)]
        if finding.code == "GPU205" and here:
            params["kwargs"] = _literal_kwargs(here[-1])
        sizes = [_literal_kwargs(c).get("batch_size") for c in (here or loaders)]
        sizes = [s for s in sizes if _count(s)]
        if sizes:
            params["batch_size"] = sizes[0]
    if finding.code == "GPU406" and _count(data.get("accum_steps")):
        params["accum_steps"] = data["accum_steps"]
    if finding.code == "GPU301" and data.get("dtype") in ("float16", "bfloat16"):
        params["dtype"] = data["dtype"]
    return params


def parse(text: str) -> Optional[ast.AST]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None
