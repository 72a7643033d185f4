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

from typing import Dict, Iterator, Sequence, Set

import libcst as cst

# Decorators that change how a method is bound, not where it is kept.
_BINDING_ONLY = frozenset({"staticmethod", "classmethod"})


def replaced_definitions(module: cst.Module) -> Iterator[cst.CSTNode]:
    """The def and class statements of the module, and of its classes, that a later
    definition of the same name in the same body replaces unused."""
    yield from _replaced_in(module.body)


def _replaced_in(body: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    last_seen: Dict[str, int] = {}
    named: Dict[int, Set[str]] = {}
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
        # Decorators and base classes of the new definition run before the name is bound again; a
        # notebook's magic between them (`%time train(...)`, a placeholder here) may name it too.
        if (any(name in _names(body[k], named, k) or _magic_placeholder(body[k]) for k in range(earlier + 1, index))
                or name in _header_names(statement)):
            continue
        yield body[earlier]


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


def _names(statement: cst.CSTNode, known: Dict[int, Set[str]], index: int) -> Set[str]:
    found = known.get(index)
    if found is None:
        collector = _Names()
        statement.visit(collector)
        found = known[index] = collector.names
    return found


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

