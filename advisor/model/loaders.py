"""Which `DataLoader(...)` calls of the file a value may hold: through names, helper returns and
parameters, iteration wrappers (`enumerate(tqdm(loader))`, both loaders of a `zip`) and wrapper
classes of the file (`Prefetcher(loader)`).

An answer is the loader sites found and whether they are all it can be: a path nobody can see
(`accelerator.prepare(...)`, an argument from elsewhere, a wrapper class) makes it not
exhaustive.
"""

from __future__ import annotations

from typing import Collection, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from advisor.model.facts import Assignment, CallSite, Context, FunctionInfo
from advisor.model.names import DATALOADER, dotted_name, last_segment
from advisor.model.value_flow import Question, ValueFlow
from advisor.model.vocabulary import ITERATION_WRAPPERS, MULTI_ITERABLE_WRAPPERS

Sites = Tuple[Tuple[CallSite, ...], bool]
_NONE: Sites = ((), False)


class LoaderSites(Question[Sites]):
    key = "loaders"
    unknown = _NONE

    def __init__(self, callers: Optional[Dict[int, Collection[CallSite]]] = None) -> None:
        # With ``callers``, a parameter of one of those functions (by id) takes its value from
        # those calls only: "the loaders this epoch loop hands to the function".
        self._callers = callers
        if callers is not None:
            self.key = f"loaders@{id(self)}"

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Sites]:
        if not isinstance(expr, cst.Call):
            return None
        model = flow.model
        qual = model.imports.qualify(expr.func)
        if qual == DATALOADER:
            site = model.loader_site(expr)
            return ((site,), True) if site is not None else _NONE
        wrapper = last_segment(qual or dotted_name(expr.func))
        if wrapper in ITERATION_WRAPPERS:
            positional = [a.value for a in expr.args if a.keyword is None and not a.star]
            if not positional or len(positional) != sum(a.keyword is None for a in expr.args):
                return _NONE
            if wrapper not in MULTI_ITERABLE_WRAPPERS:
                positional = positional[:1]
            return self.combine([flow.ask(self, p, ctx, order) for p in positional])
        func = expr.func
        if qual is None and isinstance(func, cst.Name) and func.value in model.facts.classes:
            # `Prefetcher(loader)`: a class of the file that wraps a loader hands on its batches.
            found = [flow.ask(self, a.value, ctx, order) for a in expr.args if not a.star]
            return (tuple(s for sites, _ in found for s in sites), False)
        return None if flow.callee(expr, ctx, order) is not None else _NONE

    def combine(self, answers: Sequence[Sites]) -> Sites:
        sites: List[CallSite] = []
        seen = set()
        for found, _ in answers:
            for site in found:
                if id(site) not in seen:
                    seen.add(id(site))
                    sites.append(site)
        return tuple(sites), all(exhaustive for _, exhaustive in answers)

    def augmented(self, flow: ValueFlow, assignment: Assignment, before: Sites, value: Sites) -> Sites:
        return _NONE

    def callers(self, flow: ValueFlow, info: FunctionInfo, sites: List[CallSite]) -> List[CallSite]:
        if self._callers is None or id(info) not in self._callers:
            return sites
        return list(self._callers[id(info)])


LOADERS = LoaderSites()


def loaders_held(model, expr: cst.BaseExpression, ctx: Context, order: float, question: LoaderSites = LOADERS) -> Sites:
    return model.values.ask(question, expr, ctx, order)


def loaders_iterated(model, loop, question: LoaderSites = LOADERS) -> Sites:
    """The loaders a `for` loop iterates (none for a `while` loop)."""
    node = loop.node
    if not isinstance(node, cst.For):
        return _NONE
    return model.values.ask(question, node.iter, loop.ctx, model.order_of(node.iter))


def loader_consumers(model, site: CallSite) -> List[tuple]:
    """The `for` loops, in this file and in the project files around it, that iterate a
    DataLoader site of this file: (model, LoopInfo) pairs."""
    consumers = model._shared.get("loader-consumers")
    if consumers is None:
        consumers = {}
        mine = {id(s) for s in model.calls_to(DATALOADER)}
        project = model.project
        models = [model]
        if project is not None and model.real_path is not None and mine:
            models += project.related_models(model.real_path)
        for other in models:
            for loop in other.facts.loops:
                for found in loaders_iterated(other, loop)[0]:
                    if id(found) in mine:
                        consumers.setdefault(id(found), []).append((other, loop))
        model._shared["loader-consumers"] = consumers
    return consumers.get(id(site), [])
