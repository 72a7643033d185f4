"""Batches a helper moves to the device in place: `to_gpu(data)`, where the project's `to_gpu`
stores `dic[key] = dic[key].cuda()` into the dict it is given. After such a call the caller's
dict holds device tensors, though no assignment in the caller says so."""

from __future__ import annotations

from typing import Dict, List, Tuple

import libcst as cst

from advisor.model.facts import Context
from advisor.model.devices import moves_to_device


def moved_in_place(model, name: str, ctx: Context, order: float) -> bool:
    """A call before ``order``, in a block that holds ``ctx`` (so on every path to the read),
    hands ``name`` to a project function that stores device copies into its items."""
    for call_ctx, call_order in model.shared("in-place-moves", _moves).get(name, ()):
        if call_order >= order:
            continue
        around = ctx
        while around is not None and around is not call_ctx:
            around = around.outer
        if around is call_ctx:
            return True
    return False


def _moves(model) -> Dict[str, List[Tuple[Context, int]]]:
    """name -> (context, order) of the calls that move its items in place. Only calls that hand
    a plain name on by itself as a statement (`to_gpu(data)`) are looked at."""
    out: Dict[str, List[Tuple[Context, int]]] = {}
    for site in model.facts.calls:
        if site.assigned_to is not None or not site.node.args:
            continue
        names = [(i, a.value.value) for i, a in enumerate(site.node.args)
                 if a.keyword is None and not a.star and type(a.value) is cst.Name]
        if not names:
            continue
        for owner, info in model.calls.targets(site):
            for position, name in names:
                index = position + info.receiver_params
                if index < len(info.params) and _stores_device_items(owner, info, info.params[index]):
                    out.setdefault(name, []).append((site.ctx, site.order))
    return out


def _stores_device_items(owner, info, param: str) -> bool:
    """The function stores a device copy into an item of its parameter (`dic[key] =
    dic[key].cuda()`, `.to(device)` too)."""
    for store in owner.facts.item_stores.get(param, ()):
        if store.ctx.function is not info or store.value is None:
            continue
        if type(store.value) is cst.Call and moves_to_device(owner, store.value, store.ctx, store.order):
            return True
    return False
