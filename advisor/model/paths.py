"""What the `if` tests on a read's path say about which bindings can reach it.

Reaching definitions (`bindings.py`) keep every binding of a sibling block, since the block may or
may not have run. The tests around the read often decide it:

- **the other arm of the same `if`**: a binding in the body cannot reach a read in the `else`
  (nor the other way), unless a loop around the `if` brings it from an earlier iteration;
- **the same condition tested twice**: after `if args.distributed: model = DDP(model)`, a read
  under a later `else` of `if args.distributed:` cannot see the wrapped model, and a read in
  its body cannot see the model from before the wrap, which the first `if` then replaced. This
  holds while nothing rebinds the tested names in between; only tests whose value stays put
  are compared: a dotted name (`args.distributed`, `self.ddp`), its negation, or its
  comparison with a literal (`world_size > 1`, `args.local_rank != -1`).

`conditions(ctx)` lists the `if` tests a block runs under with the polarity they hold there
(the kinds of values use it too: `isinstance(model, DDP)` in `kinds.py`).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.model.facts import Context, Facts, Guard
from advisor.model.names import dotted_name

# A comparison and its complement: `x is not None` holds exactly when `x is None` does not.
_COMPLEMENT = {cst.IsNot: cst.Is, cst.NotEqual: cst.Equal, cst.NotIn: cst.In}


class Condition:
    """A test on a path, with whether it holds there, and its stable key (or None)."""

    __slots__ = ("guard", "holds", "key", "names")

    def __init__(self, guard: Guard, holds: bool, key: Optional[str], names: Tuple[str, ...]) -> None:
        self.guard = guard
        self.holds = holds
        self.key = key
        self.names = names  # the dotted names the key reads: rebinding one changes the test


def _literal(node: cst.BaseExpression) -> Optional[str]:
    if type(node) is cst.Integer:
        return node.value
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer:
        return "-" + node.expression.value
    if type(node) is cst.SimpleString:
        value = node.evaluated_value
        return repr(value) if isinstance(value, str) else None
    if type(node) is cst.Name and node.value in ("None", "True", "False"):
        return node.value
    if type(node) in (cst.List, cst.Tuple) and node.elements:
        # `rank in [-1, 0]`: a collection of literals written in place.
        parts = [_literal(e.value) if type(e) is cst.Element else None for e in node.elements]
        return "[" + ", ".join(parts) + "]" if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    return None


def stable_key(test: cst.BaseExpression) -> Optional[Tuple[str, bool, str]]:
    """(key, polarity, dotted name read) of a test whose value depends only on one dotted name:
    `args.distributed` -> ("args.distributed", True), `not ddp` -> ("ddp", False),
    `rank != -1` -> ("rank Equal -1", False)."""
    positive = True
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
        positive = not positive
    name = dotted_name(test)
    if name is not None:
        return name, positive, name
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        left = dotted_name(test.left)
        target = test.comparisons[0]
        literal = _literal(target.comparator)
        if left is None or literal is None:
            return None
        operator = type(target.operator)
        if operator in _COMPLEMENT:
            operator, positive = _COMPLEMENT[operator], not positive
        return f"{left} {operator.__name__} {literal}", positive, left
    return None


def _adds_guard(ctx: Context) -> bool:
    outer = ctx.outer
    return ctx.guard is not None and (outer is None or outer.guard is not ctx.guard)


def _adds_loop(ctx: Context) -> bool:
    outer = ctx.outer
    return ctx.loop is not None and (outer is None or outer.loop is not ctx.loop)


def conditions(ctx: Context) -> List[Condition]:
    """The `if` tests a block runs under, innermost first, each with the polarity it has there
    (an `else` or the statements after `if test: return` run where the test is false)."""
    out: List[Condition] = []
    current: Optional[Context] = ctx
    while current is not None:
        if _adds_guard(current):
            guard = current.guard
            found = stable_key(guard.test)
            if found is None:
                out.append(Condition(guard, guard.positive, None, ()))
            else:
                key, positive, name = found
                out.append(Condition(guard, guard.positive == positive, key, (name,)))
        current = current.outer
    return out


class PathFilter:
    """Drops the bindings that the tests on a read's path rule out (see the module docstring)."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._conditions: Dict[int, List[Condition]] = {}

    def of(self, ctx: Context) -> List[Condition]:
        """`conditions(ctx)`, memoised per block."""
        found = self._conditions.get(id(ctx))
        if found is None:
            found = self._conditions[id(ctx)] = conditions(ctx)
        return found

    def feasible(self, found: Sequence, ctx: Context, order: float, chain: Set[int]) -> List:
        """The bindings of ``found`` (oldest first; each with ``ctx`` and ``order``) that can
        reach a read at ``order`` in ``ctx``; ``chain`` holds the ids of the read's blocks."""
        read = self.of(ctx)
        if not read or len(found) == 0:
            return list(found)
        by_test = {id(c.guard.test): c.holds for c in read}
        by_key: Dict[str, Condition] = {c.key: c for c in read if c.key is not None}
        out = []
        for i, binding in enumerate(found):
            if self._excluded(binding, ctx, order, chain, by_test, by_key):
                continue
            if binding.order < order and by_key and self._replaced(binding, found[i + 1:], ctx, order, chain, by_key):
                continue
            out.append(binding)
        return out

    def implied(self, found: Sequence, ctx: Context, order: float, chain: Set[int]) -> bool:
        """Some binding of ``found`` before the read runs whenever the read's tests hold: `if
        rank in [-1, 0]: testloader = ...` and, later, a read under the same `if rank in [-1, 0]:`
        sees it and nothing from before."""
        by_key: Dict[str, Condition] = {c.key: c for c in self.of(ctx) if c.key is not None}
        return bool(by_key) and any(b.order < order and self._runs_under(b, ctx, chain, by_key) for b in found)

    def _excluded(self, binding, ctx: Context, order: float, chain: Set[int], by_test, by_key) -> bool:
        """The binding sits in a block that the read's tests rule out."""
        current: Optional[Context] = binding.ctx
        while current is not None and id(current) not in chain:
            if _adds_guard(current):
                guard = current.guard
                holds = by_test.get(id(guard.test))
                if holds is not None and holds != guard.positive and guard.ctx.loop is None:
                    return True  # the other arm of the same `if`
                found = stable_key(guard.test)
                if found is not None:
                    key, positive, name = found
                    other = by_key.get(key)
                    if (
                        other is not None
                        and other.holds != (guard.positive == positive)
                        and self._stable(name, ctx, min(guard.order, other.guard.order), max(guard.order, other.guard.order))
                    ):
                        return True  # the same test, found false on the read's path
            current = current.outer
        return False

    def _replaced(self, binding, later: Sequence, ctx: Context, order: float, chain: Set[int], by_key) -> bool:
        """A later binding runs whenever the read's tests hold, between this one and the read."""
        for other in later:
            if other.order >= order:
                break
            if self._runs_under(other, ctx, chain, by_key):
                return True
        return False

    def _runs_under(self, binding, ctx: Context, chain: Set[int], by_key) -> bool:
        current: Optional[Context] = binding.ctx
        implied = False
        while current is not None and id(current) not in chain:
            if id(current) in self.facts.optional_blocks or _adds_loop(current):
                return False  # an `except` handler, an `else` of a loop, a loop body: may not run
            if _adds_guard(current):
                guard = current.guard
                found = stable_key(guard.test)
                if found is None:
                    return False
                key, positive, name = found
                other = by_key.get(key)
                if other is None or other.holds != (guard.positive == positive):
                    return False
                if not self._stable(name, ctx, min(guard.order, other.guard.order), max(guard.order, other.guard.order)):
                    return False
                implied = True
            current = current.outer
        return implied and current is not None

    def _stable(self, name: str, ctx: Context, start: int, end: int) -> bool:
        """Nothing in the read's scope rebinds ``name`` (or the names it is read through)
        between two tests of it."""
        scope = ctx.scope
        parts = name.split(".")
        assignments = self.facts.assignments
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            scopes = (ctx.class_scope, scope) if prefix.startswith("self.") and ctx.class_scope else (scope,)
            for where in scopes:
                for assignment in assignments.get((where, prefix), ()):
                    if start < assignment.order <= end and (where == scope or assignment.ctx.function is ctx.function):
                        return False
        return True
