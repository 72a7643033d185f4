"""Replacing cells' sources in a notebook's JSON text without re-serialising the file.

A notebook is written by many tools, each with its own layout: Jupyter's 1-space indentation,
tabs, CRLF line ends, `\\u` escapes (``ensure_ascii``) or raw UTF-8, key order, a trailing
newline or none. Dumping the parsed notebook again would impose one layout on the whole file,
so a fix would show up as a change to every line. Instead the text is scanned once to find
where each cell's ``source`` value lies, and only those characters are replaced:

- a string source becomes the new string;
- in a list source, the lines that did not change keep their exact characters (escapes
  included) and the separators around them; a new or edited line takes a neighbour's
  separator. New text is escaped as the file is: a file that is pure ASCII stays pure ASCII.

The result is parsed again and compared with the intended notebook before it is used.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LINES = re.compile(r"[^\n]*\n|[^\n]+$")
_DECODER = json.JSONDecoder()


class LayoutError(Exception):
    """The text could not be edited in place (it does not read as the notebook it was parsed as)."""


class _Cursor:
    """A position in the JSON text, moved over whitespace, punctuation and whole values."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.pos = 0

    def peek(self) -> str:
        self.pos = _WHITESPACE.match(self.raw, self.pos).end()
        if self.pos >= len(self.raw):
            raise LayoutError("unexpected end of the JSON text")
        return self.raw[self.pos]

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise LayoutError(f"expected {char!r} at offset {self.pos}")
        self.pos += 1

    def value(self) -> Tuple[Any, int, int]:
        """The next value, decoded, with its span."""
        self.peek()
        start = self.pos
        try:
            value, self.pos = _DECODER.raw_decode(self.raw, start)
        except (ValueError, RecursionError) as exc:
            raise LayoutError(str(exc)) from None
        return value, start, self.pos

    def members(self, visit: Callable[[str], None]) -> None:
        """Walks an object; ``visit(key)`` must consume the member's value."""
        self.take("{")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            key, _, _ = self.value()
            self.take(":")
            visit(key)
            closing = self.peek()
            self.pos += 1
            if closing == "}":
                return
            if closing != ",":
                raise LayoutError(f"expected ',' or '}}' at offset {self.pos - 1}")

    def elements(self, visit: Callable[[int], None]) -> None:
        """Walks an array; ``visit(index)`` must consume the element."""
        self.take("[")
        if self.peek() == "]":
            self.pos += 1
            return
        index = 0
        while True:
            visit(index)
            index += 1
            closing = self.peek()
            self.pos += 1
            if closing == "]":
                return
            if closing != ",":
                raise LayoutError(f"expected ',' or ']' at offset {self.pos - 1}")


def source_spans(raw: str) -> Dict[int, Tuple[int, int]]:
    """Where each cell's ``source`` value lies in the text: 1-based cell number -> (start, end).
    Where a key appears twice, the last one counts, as it does for ``json.loads``."""
    cursor = _Cursor(raw)
    spans: Dict[int, Tuple[int, int]] = {}

    def cell(index: int) -> None:
        def member(key: str) -> None:
            _, start, end = cursor.value()
            if key == "source":
                spans[index + 1] = (start, end)

        if cursor.peek() == "{":
            cursor.members(member)
        else:
            cursor.value()

    def top(key: str) -> None:
        if key == "cells" and cursor.peek() == "[":
            spans.clear()
            cursor.elements(cell)
        else:
            cursor.value()

    cursor.members(top)
    return spans


def replace_sources(raw: str, data: Dict[str, Any], sources: Dict[int, str]) -> str:
    """``raw`` (the text ``data`` was parsed from) with the given cells' sources replaced and
    every other character kept. Raises LayoutError where that cannot be done."""
    spans = source_spans(raw)
    ensure_ascii = raw.isascii()
    expected = copy.deepcopy(data)
    edits: List[Tuple[int, int, str]] = []
    for index, text in sources.items():
        if index not in spans:
            raise LayoutError(f"cell {index} has no source to replace")
        start, end = spans[index]
        cell = expected["cells"][index - 1]
        if raw[start] == "[":
            lines = _LINES.findall(text)
            cell["source"] = lines
            edits.append((start, end, _render_list(raw, start, lines, ensure_ascii)))
        else:
            cell["source"] = text
            edits.append((start, end, json.dumps(text, ensure_ascii=ensure_ascii)))
    out = raw
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    try:
        same = json.loads(out) == expected
    except (ValueError, RecursionError):
        same = False
    if not same:
        raise LayoutError("the edited text does not read back as the fixed notebook")
    return out


def _render_list(raw: str, start: int, lines: List[str], ensure_ascii: bool) -> str:
    """The list at ``start`` holding ``lines``: the items that did not change keep their text
    and the separators around them; new items take a neighbour's separator."""
    cursor = _Cursor(raw)
    cursor.pos = start
    spans: List[Tuple[int, int]] = []
    values: List[Any] = []

    def item(_: int) -> None:
        value, s, e = cursor.value()
        values.append(value)
        spans.append((s, e))

    cursor.elements(item)
    if not lines:
        return "[]"
    if not spans:  # `[]` before: a list on one line, as json.dumps writes one without indent
        return "[" + ", ".join(json.dumps(line, ensure_ascii=ensure_ascii) for line in lines) + "]"
    separators = [raw[spans[i][1]:spans[i + 1][0]] for i in range(len(spans) - 1)]
    opening = raw[start + 1:spans[0][0]]
    closing = raw[spans[-1][1]:cursor.pos - 1]
    if separators:
        default = separators[0]
    else:  # one item before: each on a line of its own as that one is, or all on one line
        default = "," + opening if "\n" in opening else ", "

    # Which old item each new one stands for: the same text, or an edited line in its place.
    old_of: List[Optional[int]] = [None] * len(lines)
    comparable = [v if isinstance(v, str) else None for v in values]  # a stray number or object
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, comparable, lines, autojunk=False).get_opcodes():
        if tag in ("equal", "replace"):
            for offset in range(min(i2 - i1, j2 - j1)):
                old_of[j1 + offset] = i1 + offset

    def token(j: int) -> str:
        i = old_of[j]
        if i is not None and values[i] == lines[j]:
            s, e = spans[i]
            return raw[s:e]
        return json.dumps(lines[j], ensure_ascii=ensure_ascii)

    def separator(j: int) -> str:  # between new items j and j + 1
        before, after = old_of[j], old_of[j + 1]
        if before is not None and before < len(separators):
            return separators[before]
        if after is not None and 0 < after <= len(separators):
            return separators[after - 1]
        return default

    parts = ["[", opening]
    for j in range(len(lines)):
        parts.append(token(j))
        parts.append(separator(j) if j + 1 < len(lines) else closing)
    parts.append("]")
    return "".join(parts)
