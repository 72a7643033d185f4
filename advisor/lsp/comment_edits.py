"""Edits that only add, remove or change comment lines and blank lines: the previous version's
findings, moved to their new lines, are the new version's findings, without an analysis.

A statement's code is the same before and after such an edit, so every model fact and every
rule's verdict is too; only rows move. The edit qualifies only when nothing else can see it:

- every changed line, old and new, is blank or a comment alone on its line, outside any
  bracket, string or backslash continuation (a comment between a call's arguments shapes a
  fix, one after a backslash breaks the statement);
- the text stays within the engine's screens (nesting, size: the caller checks the size);
- no changed line mentions `noqa` (suppressions, GPU001) or `import` (the project's import
  index reads import lines from the text);
- every string a rule requires in the text (``Rule.requires``, the engine's pre-filter) is
  present in both versions or in neither;
- no finding's place is on the changed lines, and no fix edit reaches into them or the code
  lines around them: a statement's printed code takes in the comments above it, a block's
  those after it (``_apart``). A row named in a message, hint or fix message ("the loop on
  line 12") is moved too.

Anything else returns None, and the caller runs the analysis. The language server then checks
the version again in full in the background and republishes if that differs (analysis.py).
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Iterable, List, Optional, Sequence, Tuple

from advisor.guards import nesting_problem
from advisor.findings import Edit, Finding, Fix, Position, Related
from advisor.source import split_lines

# A row named in a message ("the loop on line 12") is one of this file's (another file's row
# is written "path:12"): it moves with the text. Other numbers after "lines" are not followed.
_LINE = re.compile(r"\bline (\d+)\b")
_LINES = re.compile(r"\blines (\d+)")
_BRACKETS = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def changed_region(old: Sequence[str], new: Sequence[str]) -> Tuple[int, int, int]:
    """(a, b, c): the lines old[a:b] became new[a:c]; the lines before and after are the same."""
    limit = min(len(old), len(new))
    a = 0
    while a < limit and old[a] == new[a]:
        a += 1
    tail = 0
    while tail < limit - a and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return a, len(old) - tail, len(new) - tail


def _comment_or_blank(line: str) -> bool:
    stripped = line.strip(" \t\x0c\r\n")
    return not stripped or stripped.startswith("#")


def _loose_lines(lines: Sequence[str], first: int, last: int, piece: Tuple[int, int]) -> bool:
    """Lines ``first``..``last - 1`` (0-based) sit between statements: tokenized with the
    top-level statements around them (lines ``piece[0]``..``piece[1] - 1``), each is a comment
    or blank line at bracket depth 0."""
    if first == last:
        return True
    if first > 0 and lines[first - 1].endswith("\\"):
        return False  # the line above continues onto them
    base, stop = piece
    text = "\n".join(lines[base:stop]) + "\n"
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP:
                depth += _BRACKETS.get(token.string, 0)
                if depth < 0:
                    return False
            elif token.type == tokenize.ERRORTOKEN:
                return False
            row, end_row = token.start[0] - 1 + base, token.end[0] - 1 + base
            if end_row < first or row >= last:
                continue
            if token.type in (tokenize.COMMENT, tokenize.NL) and depth == 0 and row == end_row:
                continue
            return False
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return False
    return True


def _apart(finding: Finding, a: int, b: int, above: int, below: int) -> bool:
    """Nothing of ``finding`` depends on old rows a+1..b (1-based; they are replaced). Rows
    ``above`` and ``below`` are the nearest code rows around them (what lies between is comment
    and blank lines, which a statement's printed code takes in: the leading lines of the
    statement below, the footer of a block above). No place on the replaced rows; no place
    over several rows that ends at ``above`` or starts at ``below``; no fix edit that reaches
    into ``above``..``below``, but for one on row ``above`` alone (a one-row node has no
    footer). A place over several rows around them only moves its end."""
    places = [(finding.start, finding.end), *((r.start, r.end) for r in finding.related)]
    for start, end in places:
        if a < start.row <= b or a < end.row <= b:
            return False
        if start.row != end.row and (end.row == above or start.row == below):
            return False
    if finding.fix is not None:
        for edit in finding.fix.edits:
            if edit.start.row == edit.end.row == above:
                continue
            if edit.start.row <= below and edit.end.row >= above:
                return False
    return True


class Reused:
    """The findings of the new text, and where its top-level statements start (for the next
    edit)."""

    __slots__ = ("findings", "boundaries")

    def __init__(self, findings: List[Finding], boundaries: Tuple[int, ...]) -> None:
        self.findings = findings
        self.boundaries = boundaries


def reuse_findings(old_text: str, new_text: str, findings: Sequence[Finding], required: Iterable[str],
                   boundaries: Sequence[int]) -> Optional[Reused]:
    """The findings of ``new_text``, moved from those of ``old_text``; None unless the edit
    qualifies (see the module's docstring). ``boundaries``: 1-based rows of ``old_text`` where
    a top-level statement (with the comments above it) starts, the first row among them; the
    changed lines are tokenized from the one before them to the one after them."""
    if "\r" in old_text or "\r" in new_text:
        return None  # the line splits below assume "\n"
    old, new = split_lines(old_text), split_lines(new_text)
    a, b, c = changed_region(old, new)
    if b - a == 0 and c - a == 0:
        return Reused(list(findings), tuple(boundaries)) if old_text == new_text else None
    changed = [*old[a:b], *new[a:c]]
    if not all(_comment_or_blank(line) for line in changed):
        return None
    joined = "\n".join(changed)
    lowered = joined.lower()
    if "noqa" in lowered or "import" in lowered:
        return None
    # A required string without a line break is in the text as before unless it is in a
    # changed line.
    if any((s in old_text) != (s in new_text) for s in required if "\n" in s or s.lower() in lowered):
        return None
    delta = c - b
    start = max((row - 1 for row in boundaries if row - 1 <= a), default=0)
    stop = min((row - 1 for row in boundaries if row - 1 >= b), default=len(old))
    if not (_loose_lines(old, a, b, (start, stop)) and _loose_lines(new, a, c, (start, stop + delta))):
        return None
    if any(ch in lowered for ch in "()[]{}") and nesting_problem(new_text) is not None:
        return None  # the engine's nesting screen counts brackets in comments too
    def moved(row: int) -> int:
        return row if row <= a else row + delta

    above = a  # 1-based rows of the nearest code lines around the replaced ones
    while above > 0 and _comment_or_blank(old[above - 1]):
        above -= 1
    below = b + 1
    while below <= len(old) and _comment_or_blank(old[below - 1]):
        below += 1
    out = []
    for finding in findings:
        if not _apart(finding, a, b, above, below):
            return None
        words = [finding.message, finding.hint or "", finding.fix.message if finding.fix is not None else ""]
        if any(moved(int(n)) != int(n) for text in words for n in _LINES.findall(text)):
            return None
        out.append(moved_finding(finding, moved) if delta else finding)
    return Reused(out, tuple(moved(row) for row in boundaries if not a < row <= b))


def _at(position: Position, moved) -> Position:
    return Position(moved(position.row), position.column)


def _renumbered(text: Optional[str], moved) -> Optional[str]:
    if not text or "line " not in text:
        return text
    return _LINE.sub(lambda m: f"line {moved(int(m.group(1)))}", text)


def moved_finding(finding: Finding, moved) -> Finding:
    """``finding`` with every row it names (places, related places, fix edits, "line 12" in its
    texts) passed through ``moved``."""
    fix = finding.fix
    if fix is not None:
        fix = Fix(_renumbered(fix.message, moved), tuple(Edit(_at(e.start, moved), _at(e.end, moved), e.content) for e in fix.edits),
                  fix.applicability)
    related = tuple(Related(r.label, _at(r.start, moved), _at(r.end, moved), r.cell) for r in finding.related)
    return Finding(finding.code, finding.name, _renumbered(finding.message, moved), finding.severity,
                   _at(finding.start, moved), _at(finding.end, moved), finding.url,
                   _renumbered(finding.hint, moved), fix, finding.filename, finding.cell,
                   finding.data, related, finding.measurement)
