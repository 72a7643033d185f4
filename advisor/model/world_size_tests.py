"""Guards that leave code to a run of one process: `if dist.get_world_size() != 1: raise ...`
at the top of a helper, `if world_size == 1:` around a save. What they guard runs on a single
rank, so rank-0 advice does not apply to it (GPU504)."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.guards import guards_of

_WORLD_SIZE = re.compile(
    r"^(world_size|get_world_size|num_processes|nprocs|num_gpus|n_gpus|n_gpu|ngpus|num_replicas)$", re.IGNORECASE
)
# Whether `size <op> n` holds for a world of one process.
_HOLDS_FOR_ONE = {
    cst.Equal: lambda n: n == 1, cst.NotEqual: lambda n: n != 1,
    cst.LessThan: lambda n: 1 < n, cst.LessThanEqual: lambda n: 1 <= n,
    cst.GreaterThan: lambda n: 1 > n, cst.GreaterThanEqual: lambda n: 1 >= n,
}
_FLIPPED = {cst.LessThan: cst.GreaterThan, cst.LessThanEqual: cst.GreaterThanEqual,
            cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual}


def _names_world_size(node: cst.BaseExpression) -> bool:
    if type(node) is cst.Call:
        node = node.func
    last = node.value if type(node) is cst.Name else node.attr.value if type(node) is cst.Attribute else ""
    return bool(_WORLD_SIZE.match(last))


def _single_when(test: cst.BaseExpression) -> Optional[bool]:
    """The truth value of ``test`` in a run of one process, when the test only compares the
    world size with a number (`world_size != 1`, `get_world_size() > 1`); else None."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = _single_when(test.expression)
        return None if inner is None else not inner
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    operator = type(test.comparisons[0].operator)
    left, right = test.left, test.comparisons[0].comparator
    if type(left) is cst.Integer:
        left, right = right, left
        operator = _FLIPPED.get(operator, operator)
    if type(right) is not cst.Integer or not _names_world_size(left) or operator not in _HOLDS_FOR_ONE:
        return None
    return _HOLDS_FOR_ONE[operator](int(right.value))


def single_process_only(ctx: Context) -> bool:
    """A guard around ``ctx`` lets it run only in a run of one process."""
    for guard in guards_of(ctx):
        holds = _single_when(guard.test)
        if holds is None:
            continue
        runs_when = guard.positive and not guard.exits
        if holds == runs_when:
            return True
    return False
