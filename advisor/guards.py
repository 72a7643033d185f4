"""Screening text before libcst sees it.

libcst's native parser overflows its stack (a segfault that ends the whole run) on nesting
that CPython itself refuses: about 1,500 nested brackets, or a 10,000-term operator chain.
A cheap scan spots files that could be such; only those go through `ast.parse`, which fails
cleanly on them.
"""

from __future__ import annotations

import ast
import re
import sys
import threading
from typing import Callable, Optional, Tuple, TypeVar

T = TypeVar("T")

_BRACKETS = re.compile(r"[()\[\]{}]")
_OPEN = frozenset("([{")
# Far beyond hand-written code, far below what crashes the parser.
MAX_DEPTH = 100
MAX_GROUP_CHARS = 15_000
MAX_LINE_CHARS = 15_000
# libcst recurses natively while parsing and in Python while visiting; both get room to do so.
DEEP_STACK_BYTES = 512 * 1024 * 1024
DEEP_RECURSION_LIMIT = 60_000


def _looks_extreme(text: str) -> bool:
    depth = deepest = 0
    group_start = longest_group = 0
    for match in _BRACKETS.finditer(text):
        if match.group() in _OPEN:
            if depth == 0:
                group_start = match.start()
            depth += 1
            if depth > deepest:
                deepest = depth
        elif depth:
            depth -= 1
            if depth == 0 and match.start() - group_start > longest_group:
                longest_group = match.start() - group_start
    if deepest > MAX_DEPTH or longest_group > MAX_GROUP_CHARS:
        return True
    return any(len(line) > MAX_LINE_CHARS for line in text.split("\n"))


def nesting_problem(text: str) -> Optional[Tuple[str, int, int]]:
    """(reason, row, column) when the file must not reach libcst, else None."""
    if not _looks_extreme(text):
        return None
    try:
        ast.parse(text)
    except (RecursionError, MemoryError):
        return "skipped: too deeply nested to analyse", 1, 1
    except SyntaxError as error:
        return f"syntax error: {error.msg}", error.lineno or 1, max(1, error.offset or 1)
    except ValueError as error:
        return f"cannot parse: {error}", 1, 1
    return None


def run_with_deep_stack(work: Callable[[], T]) -> T:
    """Runs ``work`` on a thread with a large stack and a high recursion limit.

    A deeply nested but valid file then costs time instead of a RecursionError or, in the
    native parser, a segfault. The limit is restored afterwards; the caller waits meanwhile.
    """
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            outcome["error"] = exc

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        thread = threading.Thread(target=target, name="advisor-analysis", daemon=True)
    finally:
        threading.stack_size(old_stack)
    sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
    try:
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
