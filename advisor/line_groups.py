"""Rows that a comment cannot end: the rows of a backslash continuation or of a multi-line
string, joined with the row that closes them, as flake8 joins them for `# noqa`.

A `# noqa` anywhere in such a group applies to every row of it (flake8 reads the group as one
line), and the group's last row is the only one a comment can be added to: a comment after a
backslash, or inside the string, would break the file or change the string. Rows inside
brackets are not joined: each ends on its own and takes its own comment.
"""

from __future__ import annotations

import io
import tokenize

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Dict, Tuple

_SKIPPED = (tokenize.ENDMARKER, tokenize.DEDENT)
_LINE_ENDS = (tokenize.NL, tokenize.NEWLINE)


def line_groups(text: str) -> Dict[int, Tuple[int, int]]:
    """1-based row -> (first, last) row of its group, for rows in groups of two rows or more.
    Rows of a text that does not tokenize keep what was found before the error."""
    groups: Dict[int, Tuple[int, int]] = {}
    first = last = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, _, (start_row, _), (end_row, _), _ = token
            if kind in _SKIPPED:
                continue
            first = start_row if not first else min(first, start_row)
            last = max(last, end_row)
            if kind in _LINE_ENDS:
                if last > first:
                    for row in range(first, last + 1):
                        groups[row] = (first, last)
                first = last = 0
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return groups


def comment_row(groups: Dict[int, Tuple[int, int]], row: int) -> int:
    """The row where a comment about ``row`` can go: the last row of its group."""
    group = groups.get(row)
    return group[1] if group is not None else row
