"""`isinstance` tests that decide what a name holds on a path: in the body of
`if isinstance(x, float):`, or the `else` of `if not isinstance(x, float):`, `x` is a Python
number, whatever the value flow would say of it elsewhere."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.names import dotted_name

_PYTHON_SCALARS = frozenset({"int", "float", "bool", "str", "complex", "numbers.Number", "numbers.Real"})


def python_scalar_here(name: str, ctx: Optional[Context]) -> bool:
    """Some test around ``ctx`` holds only when ``name`` is a Python scalar (`int`, `float`, ...)."""
    current = ctx
    seen = None
    while current is not None:
        guard = current.guard
        if guard is not None and guard is not seen:
            seen = guard
            holds = guard.positive and not guard.exits
            test = guard.test
            while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                test, holds = test.expression, not holds
            if holds and _isinstance_of_scalars(test, name):
                return True
        current = current.outer
    return False


def _isinstance_of_scalars(test: cst.BaseExpression, name: str) -> bool:
    if type(test) is not cst.Call or not (type(test.func) is cst.Name and test.func.value == "isinstance"):
        return False
    if len(test.args) != 2 or dotted_name(test.args[0].value) != name:
        return False
    kinds = test.args[1].value
    names = [e.value for e in kinds.elements] if type(kinds) is cst.Tuple else [kinds]
    return bool(names) and all(dotted_name(n) in _PYTHON_SCALARS for n in names)
