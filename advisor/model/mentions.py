"""Whether a value is computed from a name matching a pattern: `seed + rank`, or `seed_offset`
bound to `ddp_rank`. Names are followed through the bindings that reach them, a fixed number
of bindings deep: a word that appears further upstream says little about this value."""

from __future__ import annotations

from typing import Dict, Optional, Pattern, Sequence, Tuple

import libcst as cst

from advisor.model.facts import Context
from advisor.model.subtree import iter_names
from advisor.model.value_flow import Question, ValueFlow


class Mentions(Question[bool]):
    unknown = False

    def __init__(self, pattern: Pattern[str], depth: int) -> None:
        self.pattern = pattern
        self.depth = depth
        self.key = f"mentions:{pattern.pattern}:{depth}"

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[bool]:
        names = list(iter_names(expr))
        if any(self.pattern.search(name) for name in names):
            return True
        if self.depth == 0:
            return False
        deeper = mentions_question(self.pattern, self.depth - 1)
        return any(flow.name(deeper, name, ctx, order) for name in names)

    def combine(self, answers: Sequence[bool]) -> bool:
        return any(answers)


_QUESTIONS: Dict[Tuple[str, int], Mentions] = {}


def mentions_question(pattern: Pattern[str], depth: int) -> Mentions:
    key = (pattern.pattern, depth)
    if key not in _QUESTIONS:
        _QUESTIONS[key] = Mentions(pattern, depth)
    return _QUESTIONS[key]


def mentions(model, expr: cst.BaseExpression, ctx: Context, pattern: Pattern[str], depth: int = 0,
             order: Optional[float] = None) -> bool:
    """A name matching ``pattern`` appears in the expression, or in the values bound to the names
    it uses, up to ``2 - depth`` bindings deep."""
    question = mentions_question(pattern, 2 - depth)
    return model.values.ask(question, expr, ctx, model.order_of(expr) if order is None else order)
