"""What the static analysis knows about a finding's site, as probe parameters (no torch).

Read with the standard `ast` module from the file the finding is in: the literal keyword
arguments of the DataLoader call at or around the finding (batch_size, num_workers, ...),
the accumulation step count in GPU406's message, the autocast dtype for GPU301. Anything not
a plain literal (None, a bool, an int, a finite float or a str) is left out, and the probe's
documented default applies: parameters travel as JSON to the probe's process and into the
result cache's key.
"""

from __future__ import annotations

import ast
import math
import re
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


def site_params(finding: Finding, lines: Optional[Sequence[str]] = None, tree: Optional[ast.AST] = None) -> Dict[str, Any]:
    """Parameters for the finding's probe; `tree` is the parsed file (None: no site facts)."""
    params: Dict[str, Any] = {}
    row, col = finding.start.row, finding.start.column
    if tree is not None:
        loaders = list(_loader_calls(tree))
        here = [c for c in loaders if _contains(c, row, col)]
        if finding.code == "GPU205" and here:
            params["kwargs"] = _literal_kwargs(here[-1])
        sizes = [_literal_kwargs(c).get("batch_size") for c in (here or loaders)]
        sizes = [s for s in sizes if isinstance(s, int) and not isinstance(s, bool) and s > 0]
        if sizes:
            params["batch_size"] = sizes[0]
    if finding.code == "GPU406":
        match = re.search(r"over `(\d+)` micro-batches", finding.message)
        if match:
            params["accum_steps"] = int(match.group(1))
    if finding.code == "GPU301" and re.search(r"\bbfloat16\b", finding.message):
        params["dtype"] = "bfloat16"
    return params


def parse(text: str) -> Optional[ast.AST]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None
