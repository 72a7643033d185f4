"""Code actions and hovers computed on plain text: the `# noqa` edit, the code under the cursor
in a `# noqa:` comment, titles. No protocol objects here, so that they are easy to test."""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

from advisor import noqa
from advisor.findings import Applicability, Edit, Fix, Position

KIND_FIX_ALL = "source.fixAll.advisor"


def fix_title(code: str, fix: Fix) -> str:
    title = f"{code}: {fix.message}"
    if fix.applicability is Applicability.UNSAFE:
        title += " (unsafe: check the result)"
    return title


def noqa_title(code: str) -> str:
    return f"Ignore {code} on this line"


def noqa_edit(line: str, row: int, code: str) -> Optional[Edit]:
    """The edit that silences ``code`` on ``line`` (row ``row``, 1-based); None where
    `advisor.noqa.add_code` offers none."""
    change = noqa.add_code(line, code)
    if change is None:
        return None
    start, end, text = change
    return Edit(Position(row, start + 1), Position(row, end + 1), text)


def noqa_code_at(line: str, column: int) -> Optional[Tuple[str, int, int]]:
    """(code, start, end) of the rule code under 0-based ``column`` inside a `# noqa:` list."""
    return noqa.code_at(line, column)


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
