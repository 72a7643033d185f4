"""libcst's parse without the node validation its native parser makes redundant.

Every node libcst builds runs ``_validate`` from ``__post_init__``: parentheses that match,
whitespace where a keyword needs it, names that are identifiers. That is the right default for
nodes that code builds (a fix), but the native parser builds nodes from tokens that already
satisfy the grammar, and the checks then cost about a quarter of a parse (libcst's own source
notes the same in a PERF comment on ``CSTNode.__post_init__``). A file's parse here skips them,
in this thread only, with one exception: a ``Name``. libcst's tokenizer accepts a few non-ASCII
characters that are not identifier characters, and its ``Name`` check is what turns such a
file into a clear "cannot parse" line (found by tests/test_fuzz.py); that check is kept.

Nodes built anywhere else (fixes, other threads, other libcst users in the process) are
validated as before.
"""

from __future__ import annotations

import threading

import libcst as cst
from libcst._nodes.base import CSTNode

_state = threading.local()


def _post_init(self: CSTNode) -> None:
    if not getattr(_state, "parsing", False) or type(self) is cst.Name:
        self._validate()


CSTNode.__post_init__ = _post_init  # type: ignore[method-assign]


def parse_module(text: str) -> cst.Module:
    """``cst.parse_module(text)``, raising what it raises, minus the redundant node checks."""
    if getattr(_state, "parsing", False):
        return cst.parse_module(text)
    _state.parsing = True
    try:
        return cst.parse_module(text)
    finally:
        _state.parsing = False
