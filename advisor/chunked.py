"""Parsing a module as a run of top-level chunks, each parsed on its own and reusable.

A chunk is a top-level statement (with its decorators and the comments and blank lines above
it). Parsing chunk by chunk costs what one parse costs, and gives two things a whole-file parse
cannot:

- the language server keeps the parsed chunks of the last version and re-parses only the chunks
  whose text changed, so a keystroke costs the parse of one function, not of the file;
- positions (``positions.py``) are computed per chunk, and only for the chunks that hold a
  finding (or, in the server, once per chunk text).

The split is found by a light scan (strings, comments, continuation lines), not by a parser, so
it can be wrong on odd layouts. A wrong split always leaves a chunk that does not parse (an
unterminated string or bracket, a dangling ``else:``), and then the caller parses the whole
file instead: the chunks are an optimisation, never a second grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.model.walk import children
from advisor.positions import Span, node_spans

_CODE = re.compile(r"#[^\r\n]*|\\(?:\r\n|[\s\S])|'''|\"\"\"|['\"]")
_STRING_END = {
    "'": re.compile(r"\\[\s\S]|'|\r|\n"),
    '"': re.compile(r'\\[\s\S]|"|\r|\n'),
    "'''": re.compile(r"\\[\s\S]|'''"),
    '"""': re.compile(r'\\[\s\S]|"""'),
}
_LINE_END = re.compile(r"\r\n|\r|\n")
# A top-level line that continues the statement above it rather than starting one.
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b|[)\]}]")
_DEFINITION = re.compile(r"(?:def|class|async)\b")
_NOT_CODE = frozenset(" \t\x0c#\r\n")


def _blocked_spans(text: str) -> List[Tuple[int, int]]:
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


def split_points(text: str) -> List[int]:
    """Offsets where chunks start (the first is always 0)."""
    blocked = _blocked_spans(text)
    points = [0]
    line_starts = [0] + [m.end() for m in _LINE_END.finditer(text)]
    run_start: Optional[int] = None  # first line of the comments and blank lines above a statement
    in_decorators = False
    span_index = 0
    for start in line_starts:
        while span_index < len(blocked) and blocked[span_index][1] <= start:
            span_index += 1
        if span_index < len(blocked) and blocked[span_index][0] < start:
            run_start = None
            continue  # inside a string or continuing the line above
        if start >= len(text):
            break
        first = text[start]
        if first in _NOT_CODE:
            stripped = text[start : start + 200].lstrip(" \t\x0c")
            if not stripped or stripped[0] in "#\r\n":
                if run_start is None:
                    run_start = start  # blank or comment-only: goes with the statement below
            else:
                run_start = None
            continue
        if _CONTINUES.match(text, start):
            run_start = None
            continue
        if in_decorators:
            if _DEFINITION.match(text, start):
                in_decorators = False
            run_start = None
            continue
        if first == "@":
            in_decorators = True
        point = run_start if run_start is not None else start
        if point > 0:
            points.append(point)
        run_start = None
    return points


@dataclass
class Chunk:
    """One chunk parsed on its own: its statements (the chunk module's header folded into the
    first one's leading lines, so that the statements alone print the chunk's text)."""

    text: str
    statements: Tuple[cst.BaseStatement, ...]
    footer: Tuple[cst.EmptyLine, ...]
    default_indent: Optional[str]  # None when the chunk has no indented block
    default_newline: str
    has_trailing_newline: bool
    spans: Optional[Dict[int, Span]] = None  # relative to the chunk's first line, made on demand
    node_ids: Optional[Set[int]] = None  # ids of its non-trivia nodes, made on demand

    def ids(self) -> Set[int]:
        if self.node_ids is None:
            found: Set[int] = set()
            stack: List[cst.CSTNode] = list(self.statements)
            while stack:
                current = stack.pop()
                found.add(id(current))
                stack.extend(children(current))
            self.node_ids = found
        return self.node_ids


def _has_block(statements: Sequence[cst.BaseStatement]) -> bool:
    return any(isinstance(getattr(s, "body", None), cst.IndentedBlock) for s in statements)


def parse_chunk(text: str) -> Chunk:
    """Raises what ``cst.parse_module`` raises."""
    module = cst.parse_module(text)
    statements = list(module.body)
    if module.header and statements:
        first = statements[0]
        statements[0] = first.with_changes(leading_lines=(*module.header, *first.leading_lines))
    return Chunk(
        text=text,
        statements=tuple(statements),
        footer=tuple(module.footer),
        default_indent=module.default_indent if _has_block(statements) else None,
        default_newline=module.default_newline,
        has_trailing_newline=module.has_trailing_newline,
    )


class ChunkCache:
    """Parsed chunks by text, kept from one analysis of a document to the next."""

    def __init__(self) -> None:
        self._chunks: Dict[str, Chunk] = {}

    def take(self, texts: Sequence[str]) -> List[Chunk]:
        """The chunks for ``texts``, parsing only the new ones; keeps exactly these afterwards.
        A text that occurs twice gets two parses: one node must never sit at two places."""
        kept: Dict[str, Chunk] = {}
        out: List[Chunk] = []
        for text in texts:
            chunk = kept.get(text)
            if chunk is not None:
                chunk = parse_chunk(text)  # a repeat within this file
            else:
                chunk = self._chunks.get(text) or parse_chunk(text)
                kept[text] = chunk
            out.append(chunk)
        self._chunks = kept
        return out


class ChunkedModule:
    """A module assembled from chunks, and the positions of its nodes."""

    def __init__(self, module: cst.Module, chunks: List[Chunk], first_lines: List[int]) -> None:
        self.module = module
        self.chunks = chunks
        self.first_lines = first_lines
        self._owner: Dict[int, int] = {}
        self._walked = 0

    def span(self, node: cst.CSTNode) -> Span:
        index = self._owner_of(node)
        chunk = self.chunks[index]
        if chunk.spans is None:
            chunk.spans = node_spans(self._chunk_module(chunk))
        (start_line, start_col), (end_line, end_col) = chunk.spans[id(node)]
        shift = self.first_lines[index] - 1
        return (start_line + shift, start_col), (end_line + shift, end_col)

    def _chunk_module(self, chunk: Chunk) -> cst.Module:
        return cst.Module(
            body=chunk.statements,
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
        )

    def _owner_of(self, node: cst.CSTNode) -> int:
        """The chunk holding ``node``: chunks are indexed in order, as far as the first lookup
        that needs them goes (a chunk kept from an earlier analysis has its ids already)."""
        key = id(node)
        while key not in self._owner:
            if self._walked >= len(self.chunks):
                raise KeyError(f"{type(node).__name__} is not in this module")
            self._owner.update(dict.fromkeys(self.chunks[self._walked].ids(), self._walked))
            self._walked += 1
        return self._owner[key]


def parse_chunked(text: str, cache: Optional[ChunkCache] = None) -> Optional[ChunkedModule]:
    """The module in chunks, or None when the file is one chunk or the chunks cannot stand in
    for a whole-file parse (a split that does not parse, mixed indentation or line endings);
    the caller then parses the whole file."""
    points = split_points(text)
    if len(points) < 2:
        return None
    texts = [text[a:b] for a, b in zip(points, [*points[1:], len(text)])]
    try:
        chunks = (cache or ChunkCache()).take(texts)
    except (cst.ParserSyntaxError, cst.CSTValidationError, ValueError, RecursionError):
        return None
    indents = {c.default_indent for c in chunks if c.default_indent is not None}
    newlines = {c.default_newline for c in chunks}
    if len(indents) > 1 or len(newlines) > 1:
        return None
    if any(c.footer or not c.has_trailing_newline for c in chunks[:-1]):
        return None
    last = chunks[-1]
    module = cst.Module(
        body=[s for c in chunks for s in c.statements],
        footer=last.footer,
        default_indent=indents.pop() if indents else "    ",
        default_newline=newlines.pop(),
        has_trailing_newline=last.has_trailing_newline,
    )
    first_lines: List[int] = []
    line = 1
    for chunk_text in texts:
        first_lines.append(line)
        line += len(_LINE_END.findall(chunk_text))
    return ChunkedModule(module, chunks, first_lines)
