"""Where a source text has strings and backslash continuations, found by a light scan (regular
expressions, no tokenizer): what splits a file into chunks (``chunked.py``) and what joins rows
for `# noqa` (``line_groups.py``) both need, at a small fraction of ``tokenize``'s cost.

The scan knows string prefixes only as far as quotes go (an ``f``/``r``/``b`` prefix is a name
character before the quote), comments, and backslashes; it never fails. On text that does not
tokenize it still returns something, which callers treat as a guess.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import List, Tuple

_CODE = re.compile(r"#[^\r\n]*|\\(?:\r\n|[\s\S])|'''|\"\"\"|['\"]")
_STRING_END = {
    "'": re.compile(r"\\[\s\S]|'|\r|\n"),
    '"': re.compile(r'\\[\s\S]|"|\r|\n'),
    "'''": re.compile(r"\\[\s\S]|'''"),
    '"""': re.compile(r'\\[\s\S]|"""'),
}


def blocked_spans(text: str) -> List[Tuple[int, int]]:
    """Offset ranges (start, end) inside which a line start is not a statement start: strings
    (which may span lines) and backslash continuations."""
    spans: List[Tuple[int, int]] = []
    pos = 0
    end_of_text = len(text)
    search = _CODE.search
    while True:
        match = search(text, pos)
        if match is None:
            return spans
        token = match.group()
        first = token[0]
        if first == "#":
            pos = match.end()
            continue
        if first == "\\":
            spans.append((match.start(), match.end() + 1))  # the next line continues this one
            pos = match.end()
            continue
        closing = _STRING_END[token].search
        cursor = match.end()
        while True:
            end = closing(text, cursor)
            if end is None:
                spans.append((match.start(), end_of_text + 1))
                return spans
            if end.group()[0] == "\\":
                cursor = end.end()
                continue
            # The closing quote, or the end of the line for a one-line string left open.
            break
        spans.append((match.start(), end.end()))
        pos = end.end()
