"""Loops that stop after a small, known number of rounds, run once per program.

A learning-rate finder (`for i, batch in enumerate(loader): ...; if i + 1 == num_it: break`,
`num_it=100`), an importance estimate over the first few batches before pruning, a profiling
probe: such a loop trains, but it runs a bounded handful of steps, once, before (or instead
of) the training run. What it does per step costs at most that many waits; it is not the run's
per-step cost, and it is often the loop's very purpose (the finder records every loss).
"""

from __future__ import annotations

import re
from typing import List, Optional

import libcst as cst

from advisor.model import open_questions
from advisor.model.facts import LoopInfo
from advisor.model.literals import literal_values

# At most this many rounds is a probe, not a training run.
FEW_ROUNDS = 200


def short_probe(model, loop: Optional[LoopInfo]) -> bool:
    """The loop stops after at most FEW_ROUNDS rounds (a top-level `if i + 1 == n: break` on
    its `enumerate` counter, with every value of `n` known and small), sits in no other loop
    of its function, runs beside a training loop of the file that never breaks out early (a
    benchmark whose every loop stops after a few steps measures those very steps), and its function runs
    once: at module level, or called only from places outside any loop (and called somewhere
    the analysis sees). Asked for every read in a training loop: answered once per loop."""
    if loop is None or loop.parent is not None:
        return False
    memo = model.shared("short-probes", lambda m: {})
    return open_questions.remembered(memo, id(loop), lambda: _short_probe(model, loop), guard=False)


def _short_probe(model, loop: LoopInfo) -> bool:
    if _finder(loop):
        return True
    rounds = bounded_rounds(model, loop)
    if rounds is None or rounds > FEW_ROUNDS:
        return False
    if not any(other is not loop and model.is_training_loop(other) and not _breaks_early(other)
               for other in model.facts.loops):
        return False
    info = loop.function
    if info is None:
        return True
    callers = model.callers(info)
    return bool(callers) and all(site.ctx.loop is None for _, site in callers)


# A learning-rate range test, by the name its function or class goes by (`LRFinder.range_test`,
# `find_lr`, `lr_find`): a library's finder is often alone in its module, with no training loop
# beside it to compare with, and it stops on divergence as often as on a count.
# Matched on whole words of the name (`CustomLRFinder` is custom_lr_finder; `arrange_test_data`
# holds no `range_test`).
_FINDER_NAME = re.compile(r"(?:^|_)(?:lr_?find(?:er)?|find_lr|range_test|lr_range(?:_test)?)(?:_|$)")
_CAMEL_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")


def _finder(loop: LoopInfo) -> bool:
    info = loop.function
    if info is None:
        return False
    return any(name and _FINDER_NAME.search(_snake(name)) for name in (info.node.name.value, info.class_name))


def _snake(name: str) -> str:
    """`CustomLRFinder` -> `custom_lr_finder`, `range_test` as it is."""
    return "_".join(word.lower() for part in name.split("_") for word in _CAMEL_WORD.findall(part))


def bounded_rounds(model, loop: LoopInfo) -> Optional[int]:
    """The most rounds the loop runs, when a top-level statement of its body breaks out once
    its `enumerate` counter reaches a known number."""
    node = loop.node
    if type(node) is not cst.For or not _enumerates(node.iter):
        return None
    counter = _counter_name(node.target)
    if counter is None:
        return None
    best: Optional[int] = None
    for statement in getattr(node.body, "body", ()):
        if type(statement) is not cst.If or statement.orelse is not None or not _only_breaks(statement.body):
            continue
        limit = _limit(model, statement.test, counter, loop)
        if limit is not None and (best is None or limit < best):
            best = limit
    return best


def _breaks_early(loop: LoopInfo) -> bool:
    """Some top-level `if` of the loop's body only breaks out of it (on whatever test)."""
    return any(type(statement) is cst.If and statement.orelse is None and _only_breaks(statement.body)
               for statement in getattr(loop.node.body, "body", ()))


def _enumerates(iterable: cst.BaseExpression) -> bool:
    return (type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "enumerate"
            and len(iterable.args) == 1)


def _counter_name(target: cst.BaseExpression) -> Optional[str]:
    if type(target) not in (cst.Tuple, cst.List) or not target.elements:
        return None
    first = target.elements[0].value
    return first.value if type(first) is cst.Name else None


def _only_breaks(body: cst.BaseSuite) -> bool:
    statements: List[cst.BaseSmallStatement] = []
    if type(body) is cst.SimpleStatementSuite:
        statements = list(body.body)
    elif type(body) is cst.IndentedBlock:
        for line in body.body:
            if type(line) is not cst.SimpleStatementLine:
                return False
            statements.extend(line.body)
    return len(statements) == 1 and type(statements[0]) is cst.Break


def _limit(model, test: cst.BaseExpression, counter: str, loop: LoopInfo) -> Optional[int]:
    """Rounds run before `counter <op> n` (or `counter + 1 <op> n`) holds, for the largest n."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    part = test.comparisons[0]
    left, operator, right = test.left, type(part.operator), part.comparator
    if _counts(right, counter) is not None:  # `n <= i`: turned round
        left, right = right, left
        operator = {cst.LessThanEqual: cst.GreaterThanEqual, cst.LessThan: cst.GreaterThan}.get(operator, operator)
    shift = _counts(left, counter)
    if shift is None or operator not in (cst.Equal, cst.GreaterThanEqual, cst.GreaterThan):
        return None
    ints = literal_values(model, right, loop.ctx, model.order_of(test)).ints()
    if not ints:
        return None
    # `i + s == n` breaks in the round where i = n - s, after n - s + 1 rounds.
    extra = 2 if operator is cst.GreaterThan else 1
    return max(ints) - shift + extra


def _counts(expr: cst.BaseExpression, counter: str) -> Optional[int]:
    """`i` (0) or `i + 1` (1): the counter, shifted by a literal."""
    if type(expr) is cst.Name and expr.value == counter:
        return 0
    if (type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Add and type(expr.left) is cst.Name
            and expr.left.value == counter and type(expr.right) is cst.Integer):
        return int(expr.right.value)
    return None
