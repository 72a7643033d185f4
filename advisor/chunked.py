"""Parsing a module as a run of top-level chunks, each parsed on its own and reusable.

A chunk is a top-level statement (with its decorators and the comments and blank lines above
it). Parsing chunk by chunk costs what one parse costs, and gives two things a whole-file parse
cannot:

- the language server keeps the parsed chunks of the last version and re-parses only the chunks
  whose text changed, so a keystroke costs the parse of one function, not of the file;
- each chunk knows where its statements start (from Python's own ``ast``), so positions
  (``positions.py``) are computed for the statements that hold a finding only, and kept with
  the chunk for the next version.

The split is found by a light scan (strings, comments, continuation lines), not by a parser, so
it can be wrong on odd layouts. A wrong split always leaves a chunk that does not parse (an
unterminated string or bracket, a dangling ``else:``), and then the caller parses the whole
file instead: the chunks are an optimisation, never a second grammar.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.model.walk import children, is_statement
from advisor.positions import Span, node_spans, statement_spans
from advisor.text_spans import blocked_spans
from advisor.trusted_parse import parse_module

_LINE_END = re.compile(r"\r\n|\r|\n")
# A top-level line that continues the statement above it rather than starting one.
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b|[)\]}]")
_DEFINITION = re.compile(r"(?:def|class|async)\b")
_NOT_CODE = frozenset(" \t\x0c#\r\n")


def split_points(text: str) -> List[int]:
    """Offsets where chunks start (the first is always 0)."""
    blocked = blocked_spans(text)
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
    stand_in: bool = False  # parsed from `name = ...` in place of a long literal (see DATA_STATEMENT_CHARS)
    # Made on demand and kept with the chunk (the server reuses chunks between versions).
    # Lines are relative to the chunk's first line.
    statement_of: Optional[Dict[int, cst.CSTNode]] = None  # node id -> innermost statement
    spans: Optional[Dict[int, Span]] = None  # every node, when one statement could not be done alone
    _anchors: Optional[Dict[int, int]] = None  # statement id -> line of its first token (from ast)
    _elifs: Set[int] = field(default_factory=set)
    _statement_spans: Dict[int, Optional[Dict[int, Span]]] = field(default_factory=dict)
    _line_starts: Optional[List[int]] = None

    def owners(self) -> Dict[int, cst.CSTNode]:
        """The innermost statement (simple line or compound) around each non-trivia node."""
        if self.statement_of is None:
            found: Dict[int, cst.CSTNode] = {}
            statements: List[cst.CSTNode] = list(self.statements)
            while statements:
                statement = statements.pop()
                stack = [statement]
                while stack:
                    node = stack.pop()
                    found[id(node)] = statement
                    for child in children(node):
                        (statements if is_statement(type(child)) else stack).append(child)
            self.statement_of = found
        return self.statement_of

    def span(self, node: cst.CSTNode, default_indent: str, default_newline: str,
             near: Optional[cst.CSTNode] = None, statement: Optional[cst.CSTNode] = None) -> Span:
        """``node``'s span, relative to the chunk. Positions are computed for the innermost
        statement around it only, printed alone at the line ast gives for it, and kept only
        if the printed code is the text found there; otherwise for the whole chunk. A fix may
        edit whitespace or a comma, which the walk does not index: ``near`` (the finding's
        node) names the statement to look in. ``statement``, when the caller knows it, saves
        walking the chunk to find it."""
        if self.stand_in:
            return (1, 0), (1, 0)  # nothing in a literal is reported; the statement's first line
        if statement is None:
            owners = self.owners()
            statement = owners.get(id(node))
            if statement is None and near is not None:
                statement = owners.get(id(near))
        spans = None
        if statement is not None:
            spans = self._statement_spans.get(id(statement), False)
            if spans is False:
                spans = self._alone(statement, default_indent, default_newline)
                self._statement_spans[id(statement)] = spans
        found = spans.get(id(node)) if spans is not None else None
        if found is None:
            if self.spans is None:
                module = cst.Module(body=self.statements, default_indent=default_indent,
                                    default_newline=default_newline)
                self.spans = node_spans(module)
            found = self.spans[id(node)]
        return found

    def _alone(self, statement: cst.CSTNode, default_indent: str, default_newline: str) -> Optional[Dict[int, Span]]:
        if self._anchors is None:
            self._anchors = {}
            try:
                tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                pass  # newer syntax than this interpreter's, say: whole-chunk positions
            else:
                anchors: Dict[int, int] = {}
                if _pair(self.statements, tree.body, anchors, self._elifs):
                    self._anchors = anchors
        first_token = self._anchors.get(id(statement))
        if first_token is None:
            return None
        before = len(statement.leading_lines)
        decorators = getattr(statement, "decorators", ())
        if decorators:
            before += len(decorators[0].leading_lines)
        first_line = first_token - before
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in _LINE_END.finditer(self.text)]
        if not 1 <= first_line <= first_token <= len(self._line_starts):
            return None
        token_start = self._line_starts[first_token - 1]
        line = self.text[token_start : token_start + 400]
        indent = line[: len(line) - len(line.lstrip(" \t\x0c"))]
        extra = {"is_elif": True} if id(statement) in self._elifs else {}
        try:
            spans, code = statement_spans(statement, first_line, indent, default_indent, default_newline, **extra)
        except (AttributeError, TypeError):
            return None
        if not self.text.startswith(code, self._line_starts[first_line - 1]):
            return None
        return spans


# -- pairing libcst statements with ast's, for the line each starts on ---------------------------
def _pair(statements: Sequence[cst.CSTNode], nodes: Sequence[ast.stmt], out: Dict[int, int], elifs: Set[int]) -> bool:
    """Records the first-token line of each statement; False when the two trees disagree."""
    i = 0
    for statement in statements:
        if i >= len(nodes):
            return False
        node = nodes[i]
        if type(statement) is cst.SimpleStatementLine:
            out[id(statement)] = node.lineno
            i += len(statement.body)  # `a = 1; b = 2` is one line, two ast statements
            continue
        i += 1
        decorators = getattr(node, "decorator_list", None)
        out[id(statement)] = decorators[0].lineno if decorators else node.lineno
        if not _pair_compound(statement, node, out, elifs):
            return False
    return i == len(nodes)


def _suite(body: cst.BaseSuite, nodes: Sequence[ast.stmt], out: Dict[int, int], elifs: Set[int]) -> bool:
    if type(body) is cst.IndentedBlock:
        return _pair(body.body, nodes, out, elifs)
    return len(body.body) == len(nodes)  # `if x: a; b` on one line


def _orelse(orelse, nodes: Sequence[ast.stmt], out: Dict[int, int], elifs: Set[int]) -> bool:
    if orelse is None:
        return not nodes
    if type(orelse) is cst.If:  # elif
        if len(nodes) != 1 or not isinstance(nodes[0], ast.If):
            return False
        out[id(orelse)] = nodes[0].lineno
        elifs.add(id(orelse))
        return _pair_compound(orelse, nodes[0], out, elifs)
    return _suite(orelse.body, nodes, out, elifs)


_AST_TRY = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)


def _pair_compound(statement: cst.CSTNode, node: ast.stmt, out: Dict[int, int], elifs: Set[int]) -> bool:
    kind = type(statement)
    if kind is cst.FunctionDef:
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _suite(statement.body, node.body, out, elifs)
    if kind is cst.ClassDef:
        return isinstance(node, ast.ClassDef) and _suite(statement.body, node.body, out, elifs)
    if kind is cst.If:
        return (isinstance(node, ast.If) and _suite(statement.body, node.body, out, elifs)
                and _orelse(statement.orelse, node.orelse, out, elifs))
    if kind is cst.For or kind is cst.While:
        expected = (ast.For, ast.AsyncFor) if kind is cst.For else (ast.While,)
        return (isinstance(node, expected) and _suite(statement.body, node.body, out, elifs)
                and _orelse(statement.orelse, node.orelse, out, elifs))
    if kind is cst.With:
        return isinstance(node, (ast.With, ast.AsyncWith)) and _suite(statement.body, node.body, out, elifs)
    if kind is cst.Try or kind is getattr(cst, "TryStar", None):
        if not isinstance(node, _AST_TRY) or len(statement.handlers) != len(node.handlers):
            return False
        return (_suite(statement.body, node.body, out, elifs)
                and all(_suite(h.body, a.body, out, elifs) for h, a in zip(statement.handlers, node.handlers))
                and _orelse(statement.orelse, node.orelse, out, elifs)
                and _orelse(statement.finalbody, node.finalbody, out, elifs))
    if kind is cst.Match:
        cases = getattr(node, "cases", None)
        return (cases is not None and len(cases) == len(statement.cases)
                and all(_suite(c.body, a.body, out, elifs) for c, a in zip(statement.cases, cases)))
    return False


def _has_block(statements: Sequence[cst.BaseStatement]) -> bool:
    return any(type(getattr(s, "body", None)) is cst.IndentedBlock for s in statements)


# A top-level statement this long that is nothing but data (a generated table: literals, and
# names such as `torch.float16`, but no call) is not given to libcst: its parse takes about
# 1.4 KB of memory per byte of source (680 MB for the 470 KB kernel-parameter table in torch),
# and no rule looks inside such a table. The analysis sees `name = ...` in its place; nothing
# inside can be reported, so its positions are never needed.
DATA_STATEMENT_CHARS = 128 * 1024
_DATA_NODES = (
    ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.USub, ast.UAdd,
    ast.Name, ast.Attribute, ast.Load,
)


def data_stand_in(text: str) -> Optional[str]:
    """``name = ...`` for a long chunk that only binds names to data, else None."""
    if len(text) < DATA_STATEMENT_CHARS:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1:
        return None
    node = tree.body[0]
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        return None
    if not all(isinstance(t, ast.Name) for t in targets):
        return None
    if not all(isinstance(n, _DATA_NODES) for n in ast.walk(value)):
        return None
    newline = _LINE_END.search(text)
    return " = ".join(t.id for t in targets) + " = ..." + (newline.group() if newline else "\n")


def parse_chunk(text: str) -> Chunk:
    """Raises what ``cst.parse_module`` raises."""
    stand_in = data_stand_in(text)
    module = parse_module(stand_in if stand_in is not None else text)
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
        stand_in=stand_in is not None,
    )


class ChunkCache:
    """Parsed chunks by text, kept from one analysis of a document to the next."""

    def __init__(self) -> None:
        self._chunks: Dict[str, Chunk] = {}

    @classmethod
    def seeded(cls, *caches: Optional["ChunkCache"]) -> "ChunkCache":
        """A new cache that starts with the chunks of ``caches`` (shared, not copied): a second
        analysis of a document (the language server's verification) that must not disturb the
        first one's cache, and is dropped alone when it stops midway. The two never run at once."""
        cache = cls()
        for other in caches:
            if other is not None:
                cache._chunks.update(other._chunks)
        return cache

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
        # False when a long literal was stood in for: the module then does not print the text,
        # and a position taken from the whole module would be wrong.
        self.prints_text = not any(c.stand_in for c in chunks)
        self.first_lines = first_lines
        self._owner: Dict[int, int] = {}
        self._walked = 0
        self._chunk_of_top: Optional[Dict[int, int]] = None

    def span(self, node: cst.CSTNode, near: Optional[cst.CSTNode] = None,
             statement_of: Optional[Dict[int, Optional[cst.CSTNode]]] = None,
             top_of: Optional[Dict[int, cst.CSTNode]] = None) -> Span:
        """``statement_of``/``top_of``: the model walk's statement index, which finds the chunk
        and statement without walking the chunks again. Raises KeyError for a node of no chunk
        (the module itself, say)."""
        index = statement = None
        if statement_of is not None and top_of is not None:
            statement = statement_of.get(id(node))
            if statement is None and near is not None:
                statement = statement_of.get(id(near))
            if statement is not None:
                if self._chunk_of_top is None:
                    self._chunk_of_top = {id(s): i for i, c in enumerate(self.chunks) for s in c.statements}
                index = self._chunk_of_top.get(id(top_of.get(id(statement))))
                if index is None:
                    statement = None
        if index is None:
            try:
                index = self._owner_of(node)
            except KeyError:
                if near is None:
                    raise
                index = self._owner_of(near)
        (start_line, start_col), (end_line, end_col) = self.chunks[index].span(
            node, self.module.default_indent, self.module.default_newline, near, statement
        )
        shift = self.first_lines[index] - 1
        return (start_line + shift, start_col), (end_line + shift, end_col)

    def _owner_of(self, node: cst.CSTNode) -> int:
        """The chunk holding ``node``: chunks are indexed in order, as far as the first lookup
        that needs them goes (a chunk kept from an earlier analysis has its ids already)."""
        key = id(node)
        while key not in self._owner:
            if self._walked >= len(self.chunks):
                raise KeyError(f"{type(node).__name__} is not in this module")
            self._owner.update(dict.fromkeys(self.chunks[self._walked].owners(), self._walked))
            self._walked += 1
        return self._owner[key]


def parse_chunked(text: str, cache: Optional[ChunkCache] = None) -> Optional[ChunkedModule]:
    """The module in chunks (a file of one top-level statement is one chunk), or None when the
    chunks cannot stand in for a whole-file parse (a split that does not parse, mixed
    indentation or line endings, no statement at all); the caller then parses the whole file."""
    points = split_points(text)
    texts = [text[a:b] for a, b in zip(points, [*points[1:], len(text)])]
    try:
        chunks = (cache or ChunkCache()).take(texts)
    except Exception:  # noqa: BLE001 - whatever stops a chunk, the whole-file parse reports it
        return None
    if not any(c.statements for c in chunks):
        return None  # comments only: nothing to position, and a header with no statement to hold it
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
