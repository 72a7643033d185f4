"""Definitions that a later one of the same name replaces before anything uses them.

A module (or class body) that defines `class RWalk` twice, or a method `_train` twice, keeps
only the last: Python binds the name again, and every later use (`RWalk(...)`,
`self._train(...)`) reaches the last one. Code pasted and edited in place leaves such copies
behind, and what is reported in the first copy never runs. A definition counts as replaced
only when it is a plain statement of the body (not under `if` or `try`), carries no decorator
that could keep it somewhere else (`@property`, `@overload`, a registry's `@register`), and no
statement between it and the next definition names it.
"""

from __future__ import annotations

import bisect
from typing import Dict, Iterator, List, Optional, Sequence, Set

import libcst as cst

# Decorators that change how a method is bound, not where it is kept.
_BINDING_ONLY = frozenset({"staticmethod", "classmethod"})


def replaced_definitions(module: cst.Module) -> Iterator[cst.CSTNode]:
    """The def and class statements of the module, and of its classes, that a later
    definition of the same name in the same body replaces unused."""
    yield from _replaced_in(module.body)


def _replaced_in(body: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    last_seen: Dict[str, int] = {}
    uses: Optional[Dict[Optional[str], List[int]]] = None
    for index, statement in enumerate(body):
        kind = type(statement)
        if kind is cst.ClassDef and type(statement.body) is cst.IndentedBlock:
            yield from _replaced_in(statement.body.body)
        if kind not in (cst.ClassDef, cst.FunctionDef):
            continue
        name = statement.name.value
        earlier = last_seen.get(name)
        last_seen[name] = index
        if earlier is None or not _plain(body[earlier]):
            continue
        if uses is None:
            uses = _uses(body)  # once per body, and only in a body that defines a name twice
        # Decorators and base classes of the new definition run before the name is bound again; a
        # notebook's magic between them (`%time train(...)`, a placeholder here) may name it too.
        if _between(uses.get(name, ()), earlier, index) or _between(uses.get(None, ()), earlier, index) or (
                name in _header_names(statement)):
            continue
        yield body[earlier]


def _uses(body: Sequence[cst.CSTNode]) -> Dict[Optional[str], List[int]]:
    """Name -> the indices (ascending) of the body's statements that name it; None -> those that
    stand in for a notebook magic. One walk of the body."""
    found: Dict[Optional[str], List[int]] = {}
    for index, statement in enumerate(body):
        collector = _Names()
        statement.visit(collector)
        for name in collector.names:
            found.setdefault(name, []).append(index)
        if _magic_placeholder(statement):
            found.setdefault(None, []).append(index)
    return found


def _between(indices: Sequence[int], earlier: int, later: int) -> bool:
    at = bisect.bisect_right(indices, earlier)
    return at < len(indices) and indices[at] < later


def _magic_placeholder(statement: cst.CSTNode) -> bool:
    """A notebook's IPython line, stood in for by `pass  # torch-advisor magic N` (notebook.py)."""
    if type(statement) is not cst.SimpleStatementLine:
        return False
    comment = statement.trailing_whitespace.comment
    return comment is not None and "torch-advisor magic" in comment.value


def _plain(statement: cst.CSTNode) -> bool:
    for decorator in statement.decorators:
        expr = decorator.decorator
        if type(expr) is not cst.Name or expr.value not in _BINDING_ONLY:
            return False
    return True


def _header_names(statement: cst.CSTNode) -> Set[str]:
    collector = _Names()
    for decorator in statement.decorators:
        decorator.visit(collector)
    if type(statement) is cst.ClassDef:
        for arg in (*statement.bases, *statement.keywords):
            arg.visit(collector)
    else:
        statement.params.visit(collector)
    return collector.names


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # `self._train(...)` looks the method up when it runs: the last definition.
        node.value.visit(self)
        return False

