"""File names as the reports print them.

A file name may hold any byte but `/` and NUL: a newline (which, printed raw, starts a line of
its own and can forge a finding in line-based output), terminal escape sequences, or bytes that
are not UTF-8 (which Python carries as lone surrogates, and which no UTF-8 stream accepts).
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode carries it
        return f"\\x{code - 0xDC00:02x}"
    named = _NAMED.get(char)
    if named is not None:
        return named
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str) -> str:
    """The text with every character that is not printable written as a Python escape: safe
    within one line of a terminal or a line-based report."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def encodable(text: str) -> str:
    """The text with its undecodable bytes (lone surrogates) written as escapes, so that it can
    be encoded as UTF-8; for formats that escape control characters themselves (JSON)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(_escape(char) if 0xD800 <= ord(char) <= 0xDFFF else char for char in text)
    return text
