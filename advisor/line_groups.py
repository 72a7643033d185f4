"""Rows that a comment cannot end: the rows of a backslash continuation or of a multi-line
string, joined with the row that closes them, as flake8 joins them for `# noqa`.

A `# noqa` anywhere in such a group applies to every row of it (flake8 reads the group as one
line), and the group's last row is the only one a comment can be added to: a comment after a
backslash, or inside the string, would break the file or change the string. Rows inside
brackets are not joined: each ends on its own and takes its own comment.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from advisor.text_spans import blocked_spans

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, Tuple

_LINE_END = re.compile(r"\r\n|\r|\n")


def line_groups(text: str) -> Dict[int, Tuple[int, int]]:
    """1-based row -> (first, last) row of its group, for rows in groups of two rows or more.

    A group is what a string or a backslash continuation that crosses a line end joins, and
    groups that share a row are one: the rows ``tokenize`` puts between two line ends, found
    by a regular-expression scan at a small fraction of its cost (a file with a `# noqa` and
    findings pays this). On text that does not tokenize the groups are a guess."""
    spans = [(a, b) for a, b in blocked_spans(text) if _LINE_END.search(text, a, b - 1)]
    if not spans:
        return {}
    starts = [0] + [m.end() for m in _LINE_END.finditer(text)]
    groups: Dict[int, Tuple[int, int]] = {}
    first = last = 0
    for start, end in spans:  # in text order
        top = bisect_right(starts, start)
        bottom = bisect_right(starts, min(end, len(text)) - 1)
        if first and top <= last:
            last = max(last, bottom)
            continue
        _record(groups, first, last)
        first, last = top, bottom
    _record(groups, first, last)
    return groups


def _record(groups: Dict[int, Tuple[int, int]], first: int, last: int) -> None:
    if last > first:
        for row in range(first, last + 1):
            groups[row] = (first, last)


def comment_row(groups: Dict[int, Tuple[int, int]], row: int) -> int:
    """The row where a comment about ``row`` can go: the last row of its group."""
    group = groups.get(row)
    return group[1] if group is not None else row
