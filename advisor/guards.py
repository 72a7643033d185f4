"""Screening text before libcst sees it.

libcst's native parser recurses once per level of nesting, and when its stack runs out the
process dies (a segfault, not an exception), taking every other file of the run with it. Its
time also grows with the square of the depth. Measured with libcst 1.9 on the 512 MB stack the
analysis runs on (see budget.py), for one statement nested N levels deep:

- `lambda: lambda: ...` dies between 3,000 and 4,000 levels, `a and a and ...` between 6,000
  and 8,000, an `elif` chain between 8,000 and 10,000;
- chains of `+`, `**`, unary minus, `not`, `x if c else ...` and attributes died at 10,000
  (7,000 for attributes) and took 10 to 40 s at 4,000 levels, 1 to 3.5 s at 1,000;
- brackets nested about 1,500 deep; CPython refuses 200 already ("too many nested
  parentheses"), and compiles none of the chains above beyond about 3,000 levels (and/or
  excepted: its tree keeps those flat).

So a file is refused when its syntax tree, counted as libcst nests it, is more than
MAX_PARSER_DEPTH levels deep: well below every crash, at a cost of seconds at worst, and beyond
what CPython itself runs.

Measuring the depth takes `ast.parse` and a walk, a fifth of a libcst parse: too much for every
file. A scan of the text first finds where deep nesting could be at all. A statement that
nests N levels holds at least N tokens that open a level (an operator, a dot, a bracket,
`not`, `lambda`, ...) within one logical line, or N `elif`s; only the statements of a file
where some logical line holds more than MAX_CHAIN_TOKENS of them, or brackets nest more than
MAX_BRACKET_DEPTH, are measured.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from typing import List, Optional, Sequence, Tuple

MAX_PARSER_DEPTH = 1_000
# Tokens in one logical line (or elifs in one file) below which no statement can come near
# MAX_PARSER_DEPTH: a level of the tree costs at least one such token, and ast adds at most one
# level of its own per token (a call's keyword, a lambda's arguments).
MAX_CHAIN_TOKENS = 400
MAX_ELIFS = 400
MAX_BRACKET_DEPTH = 100
# Lines and bracket groups this long parse slowly in libcst (a megabyte on one line takes tens
# of seconds, uninterruptibly): the runner analyses such files in a child process.
LONG_CHARS = 15_000

_BRACKETS = re.compile(r"[()\[\]{}]")
_OPEN = frozenset("([{")
# A region shorter than MAX_CHAIN_TOKENS characters cannot hold that many tokens.
_NEWLINE = re.compile(r"\r\n|\r|\n")  # what Python counts lines by
_CONTINUATION = re.compile(r"\\(?:\r\n|\r|\n)")
# What opens a level of nesting. Strings and comments are not told apart: a count too high
# only costs the measurement.
_LEVEL_CHARS = "-+*/%@&|^~<>.([{"
_LEVEL_WORD = re.compile(r"\b(?:not|and|or|if|else|lambda|await)\b")


class _Scan:
    """Where a file could nest deeply, from its text alone."""

    __slots__ = ("whole", "regions", "long")

    def __init__(self, text: str) -> None:
        self.whole = False  # the whole file must be measured
        self.regions: List[Tuple[int, int]] = []  # offsets of logical lines with many level tokens
        self.long = False  # a line or bracket group of LONG_CHARS or more
        candidates: List[Tuple[int, int]] = []
        self._brackets(text, candidates)
        for start, end in _long_lines(text):
            candidates.append((start, end))
            if end - start >= LONG_CHARS:
                self.long = True
        candidates.extend(_continued_lines(text))
        if text.count("elif") > MAX_ELIFS:
            self.whole = True
        if self.whole:
            return
        for start, end in candidates:
            if _level_tokens(text[start:end]) > MAX_CHAIN_TOKENS:
                self.regions.append((start, end))

    def _brackets(self, text: str, candidates: List[Tuple[int, int]]) -> None:
        depth = 0
        group_start = 0
        for match in _BRACKETS.finditer(text):
            if match.group() in _OPEN:
                if depth == 0:
                    group_start = match.start()
                depth += 1
                if depth > MAX_BRACKET_DEPTH:
                    self.whole = True
            elif depth:
                depth -= 1
                if depth == 0 and match.start() - group_start >= MAX_CHAIN_TOKENS:
                    candidates.append((group_start, match.end()))
                    if match.start() - group_start >= LONG_CHARS:
                        self.long = True
        if depth and len(text) - group_start >= MAX_CHAIN_TOKENS:  # never closed
            candidates.append((group_start, len(text)))

    @property
    def deep(self) -> bool:
        """Whether the file must be measured before libcst may parse it."""
        return self.whole or bool(self.regions)


def _level_tokens(part: str) -> int:
    """How many tokens that open a level the text holds (more or less: the count may be high,
    never low). str.count per character is many times faster than one regular expression."""
    count = 0
    for char in _LEVEL_CHARS:
        count += part.count(char)
    if count > MAX_CHAIN_TOKENS:
        return count
    return count + len(_LEVEL_WORD.findall(part))


def _long_lines(text: str) -> List[Tuple[int, int]]:
    """(start, end) of the lines of MAX_CHAIN_TOKENS characters or more. Lines are split at
    "\n" only: a lone "\r" ending makes longer lines, never shorter ones."""
    lines = text.split("\n")
    lengths = list(map(len, lines))  # at C speed; most files have no long line at all
    if max(lengths) < MAX_CHAIN_TOKENS:
        return []
    found = []
    offset = 0
    for length in lengths:
        if length >= MAX_CHAIN_TOKENS:
            found.append((offset, offset + length))
        offset += length + 1
    return found


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _continued_lines(text: str) -> List[Tuple[int, int]]:
    """Runs of backslash-continued lines of MAX_CHAIN_TOKENS characters or more."""
    runs: List[Tuple[int, int]] = []
    start = end = -1  # the run so far: where its first line starts, where its last continuation ends
    for match in _CONTINUATION.finditer(text):
        line_start = max(text.rfind("\n", 0, match.start()), text.rfind("\r", 0, match.start())) + 1
        if line_start != end:  # not the line after the last continuation: a new run
            if end >= 0 and end - start >= MAX_CHAIN_TOKENS:
                runs.append((start, _line_end(text, end)))
            start = line_start
        end = match.end()
    if end >= 0 and _line_end(text, end) - start >= MAX_CHAIN_TOKENS:
        runs.append((start, _line_end(text, end)))
    return runs


# The last text scanned and its scan: the runner asks `looks_risky` and the engine then
# `nesting_problem` of the same string object, and the scan is a pass over every bracket.
_last: Tuple[Optional[str], Optional[_Scan]] = (None, None)


def _scan(text: str) -> _Scan:
    global _last
    known_text, known = _last
    if known_text is text and known is not None:
        return known
    scan = _Scan(text)
    _last = (text, scan)
    return scan


def looks_risky(text: str) -> bool:
    """Whether the text could nest deeply or parse slowly: what the runner analyses in a child
    process when it checks files in its own, so that an unforeseen crash costs one file."""
    scan = _scan(text)
    return scan.deep or scan.long


def nesting_problem(text: str) -> Optional[Tuple[str, int, int]]:
    """(reason, row, column) when the file must not reach libcst, else None."""
    scan = _scan(text)
    if not scan.deep:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are not ours to report
            tree = ast.parse(text)
    except (RecursionError, MemoryError):
        return "skipped: too deeply nested to analyse (Python's own parser gives up on it too)", 1, 1
    except SyntaxError as error:
        if sys.version_info < (3, 12) and _shallow_by_count(text, scan):
            # Newer syntax than this interpreter reads (a Python 3.12 f-string with a backslash
            # or nested quotes, which libcst parses), and no region could be deep: libcst decides.
            return None
        return f"syntax error: {error.msg}", error.lineno or 1, max(1, error.offset or 1)
    except ValueError as error:
        return f"cannot parse: {error}", 1, 1
    statements = tree.body if scan.whole else _statements_in(tree.body, text, scan.regions)
    line = _too_deep(statements, MAX_PARSER_DEPTH, _line_starts(text)) if statements else None
    if line is None:
        return None
    return (f"skipped: too deeply nested to analyse (more than {MAX_PARSER_DEPTH:,} levels at line {line}, "
            "beyond what the parser handles safely)"), line, 1


def _shallow_by_count(text: str, scan: _Scan) -> bool:
    """No bracket nests past MAX_BRACKET_DEPTH and no region holds MAX_PARSER_DEPTH tokens that
    open a level: the counts bound the depth from above, so the file cannot be too deep."""
    return not scan.whole and all(_level_tokens(text[start:end]) <= MAX_PARSER_DEPTH for start, end in scan.regions)


def _line_starts(text: str) -> List[int]:
    """The offset where each line starts, for ast's line numbers (1-based: starts[line - 1])."""
    return [0] + [match.end() for match in _NEWLINE.finditer(text)]


def _statements_in(body: Sequence[ast.stmt], text: str, regions: List[Tuple[int, int]]) -> List[ast.stmt]:
    """The top-level statements that overlap one of the regions (offsets into text)."""
    spans = [(len(_NEWLINE.findall(text, 0, start)) + 1, len(_NEWLINE.findall(text, 0, end)) + 1)
             for start, end in regions]
    return [node for node in body
            if any(node.lineno <= last and first <= (node.end_lineno or node.lineno) for first, last in spans)]


def _too_deep(statements: Sequence[ast.AST], limit: int, starts: List[int]) -> Optional[int]:
    """The line of the statement that holds a node more than ``limit`` levels deep (the first
    `if` of an elif chain), or None. Iterative: the trees measured here are exactly those too
    deep to walk recursively.

    Every level of the tree takes at least one character of source of its own (an operator, a
    dot, a bracket, a keyword), give or take a wrapper without one (a statement around an
    expression, a lambda's empty arguments): a node spanning fewer than half the levels left
    cannot reach the limit, and its subtree is not visited. So a long data table costs a visit
    per element, not per node."""
    stack = [(node, 1, getattr(node, "lineno", 1)) for node in statements]
    iter_child_nodes = ast.iter_child_nodes
    last = len(starts) - 1
    while stack:
        node, depth, line = stack.pop()
        if type(node) is ast.BoolOp:
            # libcst nests `a and b and c` as a chain of pairs: one level per operator.
            depth += len(node.values) - 2
        if depth > limit:
            return line
        depth += 1
        room = (limit - depth) // 2 - 2
        elif_ = node.orelse[0] if type(node) is ast.If and len(node.orelse) == 1 else None
        for child in iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is None:
                stack.append((child, depth, line))
                continue
            end = child.end_lineno or first
            # An upper bound of its length: columns count UTF-8 bytes, and its first line's
            # offset is not taken off.
            if end <= last and starts[end - 1] + (child.end_col_offset or 0) - starts[first - 1] < room:
                continue
            statement = isinstance(child, ast.stmt) and child is not elif_
            stack.append((child, depth, first if statement else line))
    return None
