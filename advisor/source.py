"""Reading a Python file's bytes into text the way the interpreter does (BOM, PEP 263 cookie).
Fixed files are written back by `file_writes`."""

from __future__ import annotations

import codecs
import io
import re

from advisor.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import List


class DecodeError(Exception):
    """The bytes are not text in the encoding the file declares."""


class SourceText(Value):
    """A file's text and the codec to write it back with ("utf-8-sig" keeps a BOM). Immutable."""

    __slots__ = ("text", "encoding")
    _fields = __slots__
    __hash__ = Value.value_hash

    def __init__(self, text: str, encoding: str) -> None:
        self.text = text
        self.encoding = encoding


def decode_source(data: bytes) -> SourceText:
    import tokenize  # here: a run answered from the cache rarely decodes anything

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # bad bytes in the first lines, unknown codec, cookie against BOM
        # Only undecodable bytes in the first lines fall through, to get a message naming the line.
        if "invalid or missing encoding declaration" not in str(exc):
            raise DecodeError(str(exc)) from None
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        row = data.count(b"\n", 0, exc.start) + 1
        raise DecodeError(f"line {row}: cannot decode byte 0x{data[exc.start]:02x} as {encoding}") from None
    except LookupError as exc:
        raise DecodeError(str(exc)) from None
    if "\x00" in text:
        raise DecodeError("source contains NUL bytes (binary file?)")
    if encoding == "utf-8-sig" and not data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8"
    return SourceText(text=text, encoding=encoding)


_NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> List[str]:
    """Lines as Python's tokenizer counts them (str.splitlines also splits on form feeds)."""
    return _NEWLINE.split(text)


class LineIndex:
    """Maps 1-based (row, column) positions to string offsets, for applying edits."""

    def __init__(self, text: str) -> None:
        # Only \r\n, \r and \n end a line for Python's tokenizer (and libcst); str.splitlines
        # would also split on form feeds and Unicode separators and shift every later row.
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def offset(self, row: int, column: int) -> int:
        if row - 1 >= len(self.starts):
            return self.starts[-1]
        return self.starts[row - 1] + column - 1
