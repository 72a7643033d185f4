"""What kind of object a value is: a DataLoader, a DistributedSampler, a DDP wrapper, a
GradScaler, an optimizer, a torch.nn module; and whether it is one on every path.

An answer maps each kind to whether every path holds it (a kind some path lacks, or reached
through a path nobody can see, is uncertain).
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import libcst as cst

from advisor.model.calls import class_kinds
from advisor.model.facts import Context
from advisor.model.names import DATALOADER, DDP_WRAPPERS, DISTRIBUTED_SAMPLER, GRAD_SCALER
from advisor.model.value_flow import Question, ValueFlow, argument
from advisor.model.vocabulary import SAME_OBJECT_METHODS

KindMap = Dict[str, bool]


def _unwraps(expr: cst.IfExp) -> bool:
    """`model.module if ddp else model`: the usual way to unwrap, never a wrapped model."""
    return any(isinstance(b, cst.Attribute) and b.attr.value == "module" for b in (expr.body, expr.orelse))


class Kinds(Question[KindMap]):
    key = "kinds"
    unknown: KindMap = {}

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[KindMap]:
        if isinstance(expr, cst.IfExp):
            return {} if _unwraps(expr) else None
        if not isinstance(expr, cst.Call):
            return None
        model = flow.model
        qual = model.imports.qualify(expr.func)
        symbol = model.symbol(qual) if qual is not None else None
        if symbol is not None and symbol.kind == "class":
            return {kind: True for kind in class_kinds(symbol.model, symbol.info)}
        if qual is not None:
            return self._constructed(flow, expr, qual, ctx, order)
        func = expr.func
        if isinstance(func, cst.Name) and func.value in model.facts.classes and not model.bindings.function(
            func.value, ctx, order
        ):
            return {kind: True for kind in class_kinds(model, model.facts.classes[func.value])}
        if isinstance(func, cst.Attribute):
            if func.attr.value in SAME_OBJECT_METHODS:
                return flow.ask(self, func.value, ctx, order)
            return {}
        return None  # a function of this file: what it returns

    def _constructed(self, flow: ValueFlow, call: cst.Call, qual: str, ctx: Context, order: int) -> KindMap:
        if qual == DATALOADER:
            kinds = {"dataloader": True}
            sampler = argument(call, "sampler", 3)
            if sampler is not None and "dist_sampler" in flow.ask(self, sampler.value, ctx, order):
                kinds["dist_loader"] = True
            return kinds
        if qual == DISTRIBUTED_SAMPLER:
            return {"dist_sampler": True}
        if qual in DDP_WRAPPERS:
            return {"ddp": True}
        if qual == GRAD_SCALER:
            return {"scaler": True}
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch.optim.") and "lr_scheduler" not in qual and last[:1].isupper():
            return {"optimizer": True}
        if qual.startswith("torch.nn.") and last[:1].isupper():
            return {"module": True}
        return {}

    def combine(self, answers: Sequence[KindMap]) -> KindMap:
        out: KindMap = {}
        for answer in answers:
            for kind in answer:
                out[kind] = True
        for kind in out:
            out[kind] = all(answer.get(kind, False) for answer in answers)
        return out


KINDS = Kinds()


class BuiltBy(Question[frozenset]):
    """The calls of one constructor (`DistributedSampler(...)`) a value may hold, by node id:
    for "is this loader built on that sampler"."""

    unknown: frozenset = frozenset()

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname
        self.key = f"built-by:{qualname}"

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[frozenset]:
        if isinstance(expr, cst.Call) and flow.model.imports.qualify(expr.func) == self.qualname:
            return frozenset({id(expr)})
        return None

    def combine(self, answers: Sequence[frozenset]) -> frozenset:
        return frozenset().union(*answers)
