"""A fast walk over libcst trees, used instead of ``CSTNode.visit`` and ``CSTNode.children``.

libcst's own traversal rebuilds every node it passes (``_visit_and_replace_children`` constructs
and validates a copy, even for a read-only visitor), and ``children`` is computed the same way.
That rebuild cost as much as the parse itself. Analysis only reads the tree, so this walk reads
each node's fields directly, in source order, and skips trivia (whitespace, parentheses, commas,
operator tokens), which hold nothing a rule looks at and make up about 60% of the nodes.

``Walker`` keeps the visitor protocol the model builder was written against: ``visit_<Type>``
(returning False skips the children), ``leave_<Type>``, and ``visit_<Type>_<field>`` /
``leave_<Type>_<field>`` around one field.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Callable, Dict, List, Optional, Tuple, Type

import libcst as cst

# Node classes that only ever hold whitespace, comments or fixed tokens.
TRIVIA: Tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.Comment,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Semicolon,
    cst.Dot,
    cst.Colon,
    cst.AssignEqual,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.Asynchronous,
    cst.ImportStar,
    cst.ParamStar,
    cst.ParamSlash,
)

# Where a class's dataclass field order is not the order its fields appear in the source
# (checked against libcst's own traversal by tests/test_walk.py).
_SOURCE_ORDER: Dict[str, Tuple[str, ...]] = {
    "Arg": ("keyword", "value"),
    "ClassDef": ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    "ExceptHandler": ("type", "name", "body"),
    "ExceptStarHandler": ("type", "name", "body"),
    "FunctionDef": ("decorators", "name", "type_parameters", "params", "returns", "body"),
    "IfExp": ("body", "test", "orelse"),
    "MatchCase": ("pattern", "guard", "body"),
    "Parameters": ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    "TypeAlias": ("name", "type_parameters", "value"),
}

_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _classes_in(annotation: object) -> List[type]:
    origin = typing.get_origin(annotation)
    if origin is None:
        return [annotation] if isinstance(annotation, type) else []
    out: List[type] = []
    for arg in typing.get_args(annotation):
        out.extend(_classes_in(arg))
    return out


def _may_hold_content(annotation: object) -> bool:
    classes = [c for c in _classes_in(annotation) if issubclass(c, cst.CSTNode)]
    return any(not issubclass(c, TRIVIA) for c in classes)


def child_fields(cls: type) -> Tuple[str, ...]:
    """The fields of a node class that can hold non-trivia nodes, in source order."""
    fields = _FIELDS.get(cls)
    if fields is not None:
        return fields
    if issubclass(cls, TRIVIA) or not dataclasses.is_dataclass(cls):
        fields = ()
    else:
        names = [f.name for f in dataclasses.fields(cls)]
        try:
            hints = typing.get_type_hints(cls)
            names = [n for n in names if _may_hold_content(hints.get(n))]
        except Exception:  # an annotation this libcst version cannot resolve: walk every field
            pass
        order = _SOURCE_ORDER.get(cls.__name__)
        if order is not None and set(names) <= set(order):
            names = [n for n in order if n in names]
        fields = tuple(names)
    _FIELDS[cls] = fields
    return fields


_CONTENT: Dict[type, bool] = {}


def _is_content(cls: type) -> bool:
    """A node class worth walking into; cached because ``isinstance`` on libcst's ABCs is slow."""
    known = _CONTENT.get(cls)
    if known is None:
        known = _CONTENT[cls] = issubclass(cls, cst.CSTNode) and not issubclass(cls, TRIVIA)
    return known


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The non-trivia child nodes, in source order (a fast ``node.children`` without trivia)."""
    out: List[cst.CSTNode] = []
    for name in _FIELDS.get(type(node)) or child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(v for v in value if _is_content(type(v)))
        elif _is_content(kind):
            out.append(value)
    return out


_STATEMENT: Dict[type, bool] = {}


def is_statement(cls: type) -> bool:
    """A simple statement line or a compound statement (cached per class, as ``_is_content``)."""
    known = _STATEMENT.get(cls)
    if known is None:
        known = _STATEMENT[cls] = issubclass(cls, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return known


_Hook = Optional[Callable[[cst.CSTNode], object]]
# Per node class: the visit hook, the leave hook, per field its own (field, visit, leave),
# whether the class is a statement, and whether it is a leaf the walk only records.
_Plan = Tuple[_Hook, _Hook, Tuple[Tuple[str, _Hook, _Hook], ...], bool, bool]


class Walker:
    """A read-only visitor with libcst's hook names, driven by ``children``'s field table.

    With ``index_statements`` set, the walk also records, for every node it passes, the
    innermost statement around it (``statement_of``) and, for every statement, the top-level
    statement it belongs to (``top_of``): positions are later computed for those statements
    alone, and a second walk to find them would cost as much as this one."""

    _plans: Dict[type, Dict[type, _Plan]] = {}
    index_statements = False

    def walk(self, node: cst.CSTNode) -> None:
        plans = Walker._plans.setdefault(type(self), {})
        self.statement_of: Optional[Dict[int, Optional[cst.CSTNode]]] = {} if self.index_statements else None
        self.top_of: Dict[int, cst.CSTNode] = {}
        self._statement: Optional[cst.CSTNode] = None
        self._top: Optional[cst.CSTNode] = None
        self._walk(node, plans)

    def statement_started(self, node: cst.CSTNode) -> None:
        """Called (with ``index_statements``) as each statement is entered, before its hooks."""

    def _plan(self, cls: Type[cst.CSTNode], plans: Dict[type, _Plan]) -> _Plan:
        me = type(self)
        name = cls.__name__
        fields = tuple(
            (f, getattr(me, f"visit_{name}_{f}", None), getattr(me, f"leave_{name}_{f}", None))
            for f in child_fields(cls)
        )
        visit, leave = getattr(me, f"visit_{name}", None), getattr(me, f"leave_{name}", None)
        statement = is_statement(cls)
        # A leaf: no hook and nothing to walk into (most Names, numbers, strings): its parent
        # only records it, without a call of its own.
        leaf = visit is None and leave is None and not statement and not fields
        plan = (visit, leave, fields, statement, leaf)
        plans[cls] = plan
        return plan

    def _walk(self, node: cst.CSTNode, plans: Dict[type, _Plan]) -> None:
        cls = type(node)
        plan = plans.get(cls) or self._plan(cls, plans)
        visit, leave, fields, statement, _ = plan
        index = self.statement_of
        if index is not None:
            outer = self._statement
            if statement:
                if outer is None:
                    self._top = node
                self.top_of[id(node)] = self._top
                self._statement = node
                self.statement_started(node)
            index[id(node)] = self._statement
        if visit is None or visit(self, node) is not False:
            for name, enter, exit_ in fields:
                value = getattr(node, name)
                if enter is not None:
                    enter(self, node)
                kind = type(value)
                if kind is tuple or kind is list:
                    for child in value:
                        kind = type(child)
                        known = plans.get(kind)
                        if known is not None and known[4]:
                            if index is not None:
                                index[id(child)] = self._statement
                        elif _CONTENT.get(kind) or _is_content(kind):
                            self._walk(child, plans)
                else:
                    known = plans.get(kind)
                    if known is not None and known[4]:
                        if index is not None:
                            index[id(value)] = self._statement
                    elif _CONTENT.get(kind) or _is_content(kind):
                        self._walk(value, plans)
                if exit_ is not None:
                    exit_(self, node)
        if leave is not None:
            leave(self, node)
        if index is not None:
            self._statement = outer
