"""Which guards a statement runs under, and whether they make it periodic or rank-0 only.

The walk records each `if` a block runs under (`Guard`, on the block's context). Whether one is a
periodic (`step % N == 0`) or rank-0 (`rank == 0`, `accelerator.is_main_process`) gate is
decided here, with the whole program in view:

- a gate held in a variable or an attribute: `should_log = step % N == 0` then `if should_log:`;
  `args.save_logs = args.logs and is_master(args)`;
- a gate computed by a helper, in this file or another of the project: `if divisible_by(i, k):`;
- an early exit: `if not should_log: return` at the top of a logging helper, or
  `if step % k != 0: continue`, gates the rest of the block;
- the `else` of a gate runs on the other steps, so it is not gated;
- a periodic test an optimizer steps under is the accumulation boundary: it runs on every
  optimizer step, so it gates nothing; unless the loop also steps outside it (a GAN's lazy
  regulariser steps again every few iterations): then it is a periodic gate;
- `rank in (-1, 0)` holds on every process of a single-GPU run (rank -1), so it gates nothing
  for the per-step costs.

A block that ends by leaving for good (`sys.exit(1)`, a `break` of the training loop, a `raise`
nothing in the loop catches) runs at most once: it is no per-step code at all (`runs_once`).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from advisor.model.builder import gate_kinds
from advisor.model.facts import Context, Guard, LoopInfo
from advisor.model.literals import literal_values
from advisor.model.names import dotted_name

_MAX_DEPTH = 3


def guards_of(ctx: Context) -> List[Guard]:
    """The guards around a context, innermost first."""
    out: List[Guard] = []
    current: Optional[Context] = ctx
    while current is not None:
        if current.guard is not None and (not out or current.guard is not out[-1]):
            out.append(current.guard)
        current = current.outer
    return out


def runs_once(ctx: Context, loop: Optional[LoopInfo]) -> bool:
    """The context is in a block that ends by leaving for good, so it runs at most once per run
    of ``loop`` (the training loop around it, None in a helper), not every step: one that exits
    the process (`if not math.isfinite(loss): print(...); sys.exit(1)`), or, directly in the
    loop's body, one that breaks out of it or raises where no `try` of the loop's body catches.
    A `raise` in a helper may be caught by its caller, and a `break` of an inner loop comes back
    on the next step: neither counts."""
    for abort in ctx.aborts:
        if abort.kind == "exit":
            return True
        if loop is not None and abort.loop is loop and (abort.kind == "break" or not abort.caught):
            return True
    return False


def every_call_path(model, info, holds, depth: int = _MAX_DEPTH) -> bool:
    """Every path of calls in the file that runs the function ``info`` passes a call for which
    ``holds(model, ctx, node)``, within ``depth`` calls up: `_save_snapshot` called only under
    `if self.local_rank == 0:` guards the `upload(...)` it calls, and the `torch.save` in that.
    False when a path ends in a function no call of the file runs (nothing known of its guard),
    or goes deeper than ``depth`` or round a cycle."""
    return _every_call_path(model, info, holds, depth, set())


def _every_call_path(model, info, holds, depth: int, seen: set) -> bool:
    callers = model.call_sites(info)
    if not callers or depth <= 0 or id(info) in seen:
        return False
    seen = seen | {id(info)}
    for site in callers:
        if holds(model, site.ctx, site.node):
            continue
        outer = site.ctx.function
        if outer is None or not _every_call_path(model, outer, holds, depth - 1, seen):
            return False
    return True


def _single_gpu_rank_test(test: cst.BaseExpression) -> bool:
    """`rank in [-1, 0]`, `local_rank in (-1, 0)`: true on the one process of a plain run."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.In) or not isinstance(target.comparator, (cst.List, cst.Tuple, cst.Set)):
        return False
    values = set()
    for element in target.comparator.elements:
        value = element.value
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            value = value.expression
            if isinstance(value, cst.Integer):
                values.add(-int(value.value))
        elif isinstance(value, cst.Integer):
            values.add(int(value.value))
    return -1 in values


class GuardKinds:
    """Per model: (periodic, rank-0) for a test, a guard, a context; memoised."""

    def __init__(self, model) -> None:
        self.model = model
        self._tests: Dict[Tuple[int, int], Tuple[bool, bool]] = {}
        self._contexts: Dict[int, bool] = {}

    def test_kinds(self, test: cst.BaseExpression, ctx: Context, order: float, depth: int = 0) -> Tuple[bool, bool]:
        key = (id(test), depth)
        known = self._tests.get(key)
        if known is not None:
            return known
        self._tests[key] = (False, False)
        if _single_gpu_rank_test(test):
            result = (False, False)
        else:
            result = gate_kinds(test)
            if result == (False, False) and depth < _MAX_DEPTH:
                result = self._through_values(test, ctx, order, depth)
        self._tests[key] = result
        return result

    def _through_values(self, test: cst.BaseExpression, ctx: Context, order: float, depth: int) -> Tuple[bool, bool]:
        """The parts of a test that hold a gate elsewhere: a name bound to one, a helper that
        returns one."""
        modulo = rank = False
        stack = [test]
        model = self.model
        while stack:
            node = stack.pop()
            found = (False, False)
            if isinstance(node, cst.BooleanOperation):
                stack.extend((node.left, node.right))
                continue
            if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                stack.append(node.expression)
                continue
            if isinstance(node, cst.Call):
                for owner, info in model.calls.targets_of_expression(node, ctx, order):
                    for site in info.return_sites:
                        kinds = owner.guards.test_kinds(site.value, site.ctx, site.order, depth + 1)
                        found = (found[0] or kinds[0], found[1] or kinds[1])
            elif dotted_name(node) is not None:
                name = dotted_name(node)
                for assignment in model.bindings.reaching(name, ctx, order).assignments:
                    if assignment.value is not None and assignment.index is None:
                        kinds = self.test_kinds(assignment.value, assignment.ctx, assignment.order, depth + 1)
                        found = (found[0] or kinds[0], found[1] or kinds[1])
            modulo, rank = modulo or found[0], rank or found[1]
        return modulo, rank

    def gates(self, guard: Guard) -> bool:
        """The guard leaves its statements to some steps or to one rank, or to runs the project
        never makes (`if self.autobalance:` where every construction leaves it False)."""
        if (guard.steps and not self._steps_elsewhere(guard)) or not (guard.positive or guard.exits):
            return False
        modulo, rank = self.test_kinds(guard.test, guard.ctx, guard.order + 0.5)
        return modulo or rank or (guard.positive and self._never_true(guard))

    @staticmethod
    def _steps_elsewhere(guard: Guard) -> bool:
        """The loop around the guard also steps an optimizer outside it: the guarded step is an
        extra update made on some iterations (a lazy regulariser), not the accumulation
        boundary every update goes through."""
        loop = guard.ctx.loop
        if loop is None:
            return False
        return any(guard not in guards_of(ctx) for ctx in loop.step_contexts)

    def _never_true(self, guard: Guard) -> bool:
        """An attribute flag whose every value, on every path, is false (`False`, `None`, `0`):
        set from a parameter whose default is false and that no construction passes."""
        name = dotted_name(guard.test)
        if name is None or not name.startswith("self."):
            return False
        found = literal_values(self.model, guard.test, guard.ctx, guard.order + 0.5)
        return found.complete and bool(found.values) and not any(value for _, value in found.values)

    def gated(self, ctx: Context) -> bool:
        known = self._contexts.get(id(ctx))
        if known is None:
            known = self._contexts[id(ctx)] = any(self.gates(g) for g in guards_of(ctx))
        return known
