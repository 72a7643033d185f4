"""Line and column of nodes, the same as libcst's ``PositionProvider`` gives, at a fifth of its cost.

libcst computes positions by generating the module's code with a state object that notes where
each node starts and ends. Its own state builds two frozen dataclasses per node, splits every
token on newlines and hashes nodes through a Python ``__hash__``; that made the position pass
the most expensive step of a check. This state keeps the same protocol (``before_codegen``,
``after_codegen``, ``record_syntactic_position``) with plain tuples keyed by ``id(node)``.
``tests/test_positions.py`` checks that it agrees with ``PositionProvider`` on every node.
"""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

import libcst as cst

Point = Tuple[int, int]  # 1-based line, 0-based column, as libcst counts them
Span = Tuple[Point, Point]

_NEWLINE = re.compile(r"\r\n?|\n")

try:  # libcst's code generation state; internal, so a version without it falls back below
    from libcst._nodes.internal import CodegenState as _CodegenState
except ImportError:  # pragma: no cover - depends on the installed libcst
    _CodegenState = None


class _Syntactic:
    """What ``record_syntactic_position`` returns: the span without parentheses or whitespace."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: "_SpanState", node: cst.CSTNode, start_node, end_node) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc) -> bool:
        state = self.state
        spans = state.spans
        start = spans[id(self.start_node)][0] if self.start_node is not None else self.start
        end = spans[id(self.end_node)][1] if self.end_node is not None else (state.line, state.column)
        spans[id(self.node)] = (start, end)
        return False


if _CodegenState is not None:

    class _SpanState(_CodegenState):
        def __init__(self, default_indent: str, default_newline: str) -> None:
            super().__init__(default_indent=default_indent, default_newline=default_newline)
            self.line = 1
            self.column = 0
            self.starts: List[Point] = []
            self.spans: Dict[int, Span] = {}

        def add_indent_tokens(self) -> None:
            self.tokens.extend(self.indent_tokens)
            for token in self.indent_tokens:
                self.column += len(token)  # indentation never holds a newline

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            if "\n" in value or "\r" in value:
                segments = _NEWLINE.split(value)
                self.line += len(segments) - 1
                self.column = len(segments[-1])
            else:
                self.column += len(value)

        def before_codegen(self, node: cst.CSTNode) -> None:
            self.starts.append((self.line, self.column))

        def after_codegen(self, node: cst.CSTNode) -> None:
            start = self.starts.pop()
            key = id(node)
            if key not in self.spans:  # a syntactic span recorded inside wins, as in libcst
                self.spans[key] = (start, (self.line, self.column))

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):  # type: ignore[override]
            return _Syntactic(self, node, start_node, end_node)


def _spans_fast(module: cst.Module) -> Dict[int, Span]:
    state = _SpanState(module.default_indent, module.default_newline)
    module._codegen(state)
    return state.spans


def statement_spans(
    statement: cst.CSTNode, first_line: int, indent: str, default_indent: str, default_newline: str, **codegen
) -> Tuple[Dict[int, Span], str]:
    """The spans of one statement printed on its own from ``first_line``, column 0, under
    ``indent``, and the code that printing produced: when that code is the file's text at that
    line, the spans are the file's. Raises AttributeError where libcst's codegen differs."""
    if _CodegenState is None:
        raise AttributeError("no codegen state in this libcst")
    state = _SpanState(default_indent, default_newline)
    state.line = first_line
    if indent:
        state.indent_tokens.append(indent)
    statement._codegen(state, **codegen)
    return state.spans, "".join(state.tokens)


def _spans_libcst(module: cst.Module) -> Dict[int, Span]:
    from libcst.metadata import MetadataWrapper, PositionProvider

    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {
        id(node): ((r.start.line, r.start.column), (r.end.line, r.end.column)) for node, r in ranges.items()
    }


def node_spans(module: cst.Module) -> Dict[int, Span]:
    """``id(node)`` -> ((line, column), (line, column)) for every node of ``module``.

    The module must stay alive while the ids are used.
    """
    if _CodegenState is not None:
        try:
            return _spans_fast(module)
        except (AttributeError, TypeError):  # a libcst whose codegen protocol changed
            pass
    return _spans_libcst(module)

