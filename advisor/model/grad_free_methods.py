"""Methods of the project's model classes that run without autograd on their own.

Inference code often turns autograd off inside the model rather than around its calls: the
body of `forward` (or of the `forward_one`/`forward_seq` it dispatches to) sits in a `with
torch.no_grad():` block, or the method carries `@torch.no_grad()`. A call of such a method
records no graph, whatever the caller does (GPU601)."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.instances import INSTANCES
from advisor.model.names import NO_GRAD_CONTEXTS

# Calls a dispatching method may make outside a no-grad block without recording anything: it
# builds fresh state or inspects its arguments.
_BOOKKEEPING = frozenset(
    """range len type isinstance list tuple dict int float print zip enumerate""".split()
)
_FACTORIES = frozenset(
    """torch.zeros torch.ones torch.empty torch.full torch.zeros_like torch.ones_like
    torch.empty_like torch.full_like torch.arange torch.tensor""".split()
)
# Methods that only inspect a tensor's shape (`assert image.dim() == 3` before the block).
_INSPECTIONS = frozenset({"dim", "size", "numel", "nelement", "ndimension"})
_DEPTH = 2


def runs_without_grad(model, call: cst.Call, ctx: Context, order: float) -> bool:
    """``call`` calls a model (`model(x)`, `model.forward(x)`, `model.forward_one(x)`) whose
    classes are all known project classes, and the method it runs is grad-free in each."""
    func = call.func
    if type(func) is cst.Attribute:
        receiver, method = func.value, func.attr.value
    else:
        receiver, method = func, "forward"
    found, known = model.values.ask(INSTANCES, receiver, ctx, order)
    return known and bool(found) and all(_grad_free(owner, info.name, method, 0) for owner, info in found)


def _grad_free(model, class_name: str, method: str, depth: int) -> bool:
    memo: Dict[tuple, bool] = model.shared("grad-free-methods", lambda m: {})
    key = (class_name, method)
    known = memo.get(key)
    if known is None:
        memo[key] = False  # a method that dispatches to itself is not shown to be grad-free
        known = memo[key] = _method_grad_free(model, class_name, method, depth)
    return known


def _method_grad_free(model, class_name: str, method: str, depth: int) -> bool:
    info = model.facts.functions.get(f"{class_name}.{method}")
    if info is None:
        return False
    if info.no_grad:
        return True
    if not info.sites:
        return False
    for site in info.sites:
        if site.ctx.no_grad or site.qualname in NO_GRAD_CONTEXTS or site.with_item:
            # The work inside the block, the `torch.no_grad()` that opens it, and what else the
            # `with` enters (`autocast("cuda")`, an EMA scope): entering records no graph.
            continue
        if type(site.node.func) is cst.Attribute and site.node.func.attr.value in _INSPECTIONS and not site.node.args[1:]:
            continue
        name = _self_method(site.node)
        if name is not None and depth < _DEPTH and name != method:
            if _grad_free(model, class_name, name, depth + 1):
                continue
            return False
        if type(site.node.func) is cst.Name and site.node.func.value in _BOOKKEEPING:
            continue
        if site.qualname in _FACTORIES:
            continue
        return False
    return True


def _self_method(call: cst.Call) -> Optional[str]:
    func = call.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        return func.attr.value
    return None
