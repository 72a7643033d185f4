"""Code actions and hovers computed on plain text: the `# noqa` edit, the code under the cursor
in a `# noqa:` comment, titles. No protocol objects here, so that they are easy to test."""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Tuple

from advisor.engine import is_suppressed
from advisor.findings import Applicability, Edit, Fix, Position

# Mirrors the engine's pattern (flake8's): `# noqa`, `# noqa: A1, B2`, `#noqa:A1 B2`.
_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)

KIND_FIX_ALL = "source.fixAll.advisor"


def fix_title(code: str, fix: Fix) -> str:
    title = f"{code}: {fix.message}"
    if fix.applicability is Applicability.UNSAFE:
        title += " (unsafe: check the result)"
    return title


def noqa_title(code: str) -> str:
    return f"Ignore {code} on this line"


def noqa_edit(line: str, row: int, code: str) -> Optional[Edit]:
    """The edit that silences ``code`` on ``line`` (row ``row``, 1-based): merged into an
    existing `# noqa: ...` list, or a new comment at the end of the line. None when the line is
    already silenced for the code, or when a comment cannot be added there (a backslash
    continuation: a comment after it would be a syntax error)."""
    if is_suppressed(line, code):
        return None
    match = _NOQA.search(line)
    if match is not None and match.group("codes"):
        start, end = match.span("codes")
        listed = match.group("codes")
        trailing = listed[len(listed.rstrip()):]  # keep the space before a following comment
        codes: List[str] = []
        for found in _CODE.findall(listed):
            if found.upper() not in codes:
                codes.append(found.upper())
        codes.append(code)
        return Edit(Position(row, start + 1), Position(row, end + 1), ", ".join(codes) + trailing)
    body = line.rstrip()
    if body.endswith("\\"):
        return None
    if not body:
        return None
    column = len(body) + 1
    return Edit(Position(row, column), Position(row, len(line) + 1), f"  # noqa: {code}")


def noqa_code_at(line: str, column: int) -> Optional[Tuple[str, int, int]]:
    """(code, start, end) of the rule code under 0-based ``column`` inside a `# noqa:` list,
    with 0-based code-point bounds (end exclusive)."""
    match = _NOQA.search(line)
    if match is None or not match.group("codes"):
        return None
    offset = match.start("codes")
    for found in _CODE.finditer(match.group("codes")):
        start, end = offset + found.start(), offset + found.end()
        if start <= column <= end:
            return found.group().upper(), start, end
    return None


def contains(start: Position, end: Position, position: Position) -> bool:
    """Whether ``position`` lies in [start, end], ends included so that a cursor just after a
    short name still hovers it."""
    return start <= position <= end


def unique(items: Iterable[str]) -> List[str]:
    seen: List[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
