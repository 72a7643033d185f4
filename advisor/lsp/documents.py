"""The open documents: text and version as the client last sent them.

pygls keeps its own copy, but it splits lines with ``str.splitlines``, which also breaks on
form feeds and Unicode line separators; the protocol (and the engine) break only on \\r\\n, \\r
and \\n. Keeping our own copy makes every position agree with the engine's rows.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

from lsprotocol import types

from advisor.lsp.convert import from_units, lines_of, uri_path

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Document:
    uri: str
    text: str
    version: Optional[int]
    language_id: str = "python"
    # The text and version analysed when diagnostics run on save only.
    saved_text: str = ""
    saved_version: Optional[int] = None
    _lines: Optional[List[str]] = field(default=None, repr=False)
    # The file it is, as the project view names files (None for an untitled buffer).
    path: Optional[str] = field(default=None, init=False)

    def __post_init__(self) -> None:
        fs_path = uri_path(self.uri)
        self.path = os.path.normpath(os.path.abspath(fs_path)) if fs_path is not None else None

    @property
    def lines(self) -> List[str]:
        # Split once per text, not once per access (the text only changes through `apply`).
        if self._lines is None:
            self._lines = lines_of(self.text)
        return self._lines

    def mark_saved(self) -> None:
        self.saved_text, self.saved_version = self.text, self.version

    def apply(self, changes: Iterable[types.TextDocumentContentChangeEvent], version: Optional[int], encoding: str) -> None:
        text = self.text
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial) and change.range is not None:
                starts = _line_starts(text, max(change.range.start.line, change.range.end.line))
                start = _offset(text, starts, change.range.start, encoding)
                end = _offset(text, starts, change.range.end, encoding)
                text = text[:start] + change.text + text[max(start, end):]
            else:
                text = change.text
        self.text = text
        self.version = version
        self._lines = None


def _line_starts(text: str, last: int) -> List[int]:
    """Where the lines start, up to the one after line ``last`` (0-based): an edit near the top
    of a large file does not split all of it."""
    starts = [0]
    for match in _BREAK.finditer(text):
        starts.append(match.end())
        if len(starts) > last + 1:
            break
    return starts


def _offset(text: str, starts: List[int], position: types.Position, encoding: str) -> int:
    if position.line >= len(starts):
        return len(text)
    start = starts[position.line]
    end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    line = text[start:end].rstrip("\r\n")
    return start + from_units(line, position.character, encoding)


class Documents:
    def __init__(self) -> None:
        self._docs: Dict[str, Document] = {}

    def open(self, uri: str, text: str, version: Optional[int], language_id: str = "python") -> Document:
        doc = Document(uri, text, version, language_id)
        doc.mark_saved()
        self._docs[uri] = doc
        return doc

    def get(self, uri: str) -> Optional[Document]:
        return self._docs.get(uri)

    def close(self, uri: str) -> Optional[Document]:
        return self._docs.pop(uri, None)

    def __iter__(self):
        return iter(list(self._docs.values()))
