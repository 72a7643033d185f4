"""Where a generator's body runs: calling a generator function runs none of it; each `next(it)`
on its iterator, and each round of a `for` loop over it, runs its body up to the next `yield`.
So a generator's body is as hot as the places that advance its iterator (`FileModel.heat_of`).

`GeneratorsHeld` answers which generator functions of the project an iterator comes from:
through names, helper returns, parameters and the wrappers that hand items on (`iter(gen)`,
`enumerate(gen)`, `tqdm(gen)`).
"""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from advisor.model.facts import Context, FunctionInfo
from advisor.model.names import dotted_name, last_segment
from advisor.model.value_flow import Question, ValueFlow
from advisor.model.vocabulary import ITERATION_WRAPPERS, MULTI_ITERABLE_WRAPPERS

Generators = FrozenSet[tuple]  # (model of the defining file, FunctionInfo)
_NONE: Generators = frozenset()


class GeneratorsHeld(Question[Generators]):
    key = "generators"
    unknown = _NONE

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Generators]:
        if not type(expr) is cst.Call:
            return None
        model = flow.model
        targets = model.calls.targets_of_expression(expr, ctx, order)
        found = frozenset((owner, info) for owner, info in targets if info.generator)
        if found:
            return found
        if targets:
            return None  # a helper: what it returns
        wrapper = last_segment(model.imports.qualify(expr.func) or dotted_name(expr.func))
        if wrapper in ITERATION_WRAPPERS:
            positional = [a.value for a in expr.args if a.keyword is None and not a.star]
            if wrapper not in MULTI_ITERABLE_WRAPPERS:
                positional = positional[:1]
            return self.combine([flow.ask(self, p, ctx, order) for p in positional])
        return None if flow.callee(expr, ctx, order) is not None else _NONE

    def combine(self, answers: Sequence[Generators]) -> Generators:
        out: set = set()
        for answer in answers:
            out |= answer
        return frozenset(out)


GENERATORS = GeneratorsHeld()


def advanced_at(model, info: FunctionInfo) -> List[Tuple[object, Context]]:
    """Where the iterators of a generator of ``model``'s file are advanced, in this file and in the
    project files that import it: (model, context) of each `next(...)` call on one, and of the
    body of each `for` loop over one."""
    places = model._shared.get("generator-places")
    if places is None:
        places = {}
        models = [model]
        if model.project is not None:
            models += model.project.importers(model)
        for other in models:
            for owner_model, key, where in _advancing(other):
                if owner_model is model:
                    places.setdefault(key, []).append((other, where))
        model._shared["generator-places"] = places
    return places.get(id(info), [])


def _advancing(model):
    """(defining model, id(generator info), context) for every place this file advances an
    iterator of some project generator (memoised per file)."""
    known = model._shared.get("generator-advances")
    if known is not None:
        return known
    known = []
    model._shared["generator-advances"] = known  # a generator that advances itself
    flow = model.values
    for site in [*model.facts.calls_by_callee.get("next", ()), *model.method_calls("next", "__next__")]:
        iterator = flow.drawn_from(site.node, site.ctx, site.order)
        if iterator is not None:
            for owner, info in flow.ask(GENERATORS, iterator, site.ctx, site.order):
                known.append((owner, id(info), site.ctx))
    for loop in model.facts.loops:
        node = loop.node
        if not type(node) is cst.For:
            continue
        found = flow.ask(GENERATORS, node.iter, loop.ctx, model.order_of(node.iter))
        if found:
            body = loop.ctx.derive(loop=loop)
            for owner, info in found:
                known.append((owner, id(info), body))
    return known
