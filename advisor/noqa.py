"""`# noqa` comments: reading them, and adding a code to one. The engine (which findings to hide),
the language server (the "Ignore on this line" action, hover on a listed code) and anything
that writes noqa comments go through here, so one comment means the same everywhere.

The pattern is flake8's: `# noqa` alone silences every code on its line; `# noqa: A1, B2` (or
`#noqa:A1 B2`) silences the listed codes and every code they are a prefix of.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import List, Optional, Sequence, Tuple

NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


class NoqaComment:
    """The first `# noqa` of a line: ``codes`` in upper case as written (empty: every code), and
    ``codes_span``, the 0-based bounds of the code list in the line (None without a list)."""

    __slots__ = ("codes", "codes_span")

    def __init__(self, codes: Tuple[str, ...], codes_span: Optional[Tuple[int, int]]) -> None:
        self.codes = codes
        self.codes_span = codes_span

    @property
    def blanket(self) -> bool:
        return not self.codes

    def silences(self, code: str) -> bool:
        return self.blanket or any(code == listed or code.startswith(listed) for listed in self.codes)


def parse(line: str) -> Optional[NoqaComment]:
    match = NOQA.search(line)
    if match is None:
        return None
    if not match.group("codes"):
        return NoqaComment((), None)
    codes = tuple(c for c in re.split(r"[,\s]+", match.group("codes").upper()) if c)
    return NoqaComment(codes, match.span("codes"))


def is_suppressed(line: str, code: str) -> bool:
    """Whether a `# noqa` on ``line`` silences ``code``."""
    comment = parse(line)
    return comment is not None and comment.silences(code)


def code_at(line: str, column: int) -> Optional[Tuple[str, int, int]]:
    """(code, start, end) of the code listed under 0-based ``column`` in the line's `# noqa:`
    list, with 0-based code-point bounds (end exclusive); None elsewhere."""
    match = NOQA.search(line)
    if match is None or not match.group("codes"):
        return None
    offset = match.start("codes")
    for found in _CODE.finditer(match.group("codes")):
        start, end = offset + found.start(), offset + found.end()
        if start <= column <= end:
            return found.group().upper(), start, end
    return None


def add_code(line: str, code: str) -> Optional[Tuple[int, int, str]]:
    """The change that makes ``line`` silence ``code`` as (start, end, text), 0-based code-point
    bounds of the part of the line to replace: the code merged into an existing `# noqa: ...`
    list (listed once, in order), or a new comment at the end of the line. None when the line
    already silences the code, is blank, or ends in a backslash continuation (a comment there
    would be a syntax error)."""
    if is_suppressed(line, code):
        return None
    match = NOQA.search(line)
    if match is not None and match.group("codes"):
        start, end = match.span("codes")
        listed = match.group("codes")
        trailing = listed[len(listed.rstrip()):]  # keep the space before a following comment
        codes: List[str] = []
        for found in _CODE.findall(listed):
            if found.upper() not in codes:
                codes.append(found.upper())
        codes.append(code)
        return start, end, ", ".join(codes) + trailing
    body = line.rstrip()
    if not body or body.endswith("\\"):
        return None
    return len(body), len(line), f"  # noqa: {code}"


def remove_codes(line: str, codes: Sequence[str]) -> Optional[Tuple[int, int, str]]:
    """The change that takes ``codes`` out of the line's `# noqa: ...` list, as (start, end,
    text) in 0-based code points; None when the line lists none of them. The other codes stay
    as written. When nothing is left the directive goes: with the whitespace before it when it
    ends the line, and leaving `#` where more comment text follows it (that text must stay a
    comment)."""
    match = NOQA.search(line)
    if match is None or not match.group("codes"):
        return None
    drop = {code.upper() for code in codes}
    listed = match.group("codes")
    kept = [found for found in _CODE.findall(listed) if found.upper() not in drop]
    if len(kept) == len(_CODE.findall(listed)):
        return None
    if kept:
        # The whitespace between the list and what follows it (a comment, the line's end)
        trailing = listed[len(listed.rstrip(", \t\r\n\f\v")):].replace(",", "")
        start, end = match.span("codes")
        return start, end, ", ".join(kept) + trailing
    start, end = match.span()
    rest = line[end:].rstrip("\r\n")
    if not rest.strip():
        before = line[:start]
        return len(before.rstrip()), len(line.rstrip("\r\n")), ""
    if rest.lstrip().startswith("#"):
        return start, end + (len(rest) - len(rest.lstrip())), ""
    return start, end, "# "


_WORD = re.compile("noqa", re.IGNORECASE)


def may_hold_noqa(text: str) -> bool:
    """A quick test before reading a text line by line: False means no `# noqa` anywhere."""
    return _WORD.search(text) is not None


def blanked(line: str) -> str:
    """The line with its `# noqa` directive made unreadable (same length, so that positions
    hold), for a check that must see the findings the comment silences."""
    match = NOQA.search(line)
    if match is None:
        return line
    word = _WORD.search(line, match.start())
    return line[:word.start()] + "n_qa" + line[word.end():]
