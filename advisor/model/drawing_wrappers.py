"""Wrapper classes that hand on a loader's batches as they are drawn.

A class such as `ForeverIterator(loader)` keeps `iter(loader)` in an attribute and returns
`next(...)` of it from `__next__`, starting a new pass when the old one ends. What a training
loop draws from an instance with `next(train_iter)` is then the loader's batch itself, still in
host memory: the loop's own `.to(device)` is the copy that pins or not.

A wrapper that may move or change the batch on the way (a prefetcher that copies to the GPU in
`__next__`) is no such class, unless the move sits under a test of an attribute that the
construction at hand leaves at its `None` default (`if self.device is not None:` for an
instance built without a device).
"""

from __future__ import annotations

from typing import FrozenSet, Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.names import dotted_name
from advisor.model.value_flow import argument, parameter_default


def hands_on_draws(model, class_name: str, construction: cst.Call) -> bool:
    """Every value the class's `__next__` (or `next`) returns is a batch drawn with `next(...)`
    from an iterator the instance holds (`next(self.iter)`), as it came, for the instance
    ``construction`` builds."""
    functions = model.facts.functions
    info = functions.get(f"{class_name}.__next__") or functions.get(f"{class_name}.next")
    if info is None or not info.return_sites:
        return False
    unset: Optional[FrozenSet[str]] = None
    for site in info.return_sites:
        value = site.value
        if type(value) is cst.Call:
            if not _draws_held(model, value, site.ctx, site.order):
                return False
            continue
        if type(value) is not cst.Name:
            return False
        drawn = False
        for binding in model.assignments(value.value, site.ctx):
            bound = binding.value
            if binding.index is None and type(bound) is cst.Call and _draws_held(model, bound, binding.ctx, binding.order):
                drawn = True
                continue
            if unset is None:
                unset = _left_unset(model, class_name, construction)
            if not _under_unset(binding.ctx, unset):
                return False
        if not drawn:
            return False
    return True


def _draws_held(model, call: cst.Call, ctx: Context, order: int) -> bool:
    iterator = model.values.drawn_from(call, ctx, order)
    return iterator is not None and (dotted_name(iterator) or "").startswith("self.")


def _left_unset(model, class_name: str, construction: cst.Call) -> FrozenSet[str]:
    """The attributes `__init__` stores from a parameter defaulting to None or False that the
    construction does not pass (`self.device = device` of `device=None`): "self.device"."""
    init = model.facts.functions.get(f"{class_name}.__init__")
    if init is None or any(a.star for a in construction.args):
        return frozenset()
    found = set()
    for binder in init.binders:
        if type(binder) is not cst.Assign or len(binder.targets) != 1 or type(binder.value) is not cst.Name:
            continue
        target = dotted_name(binder.targets[0].target) or ""
        param = binder.value.value
        if not target.startswith("self.") or param not in init.params[init.receiver_params:]:
            continue
        default = parameter_default(init, param)
        if type(default) is not cst.Name or default.value not in ("None", "False"):
            continue
        if argument(construction, param, init.params.index(param) - init.receiver_params) is None:
            found.add(target)
    return frozenset(found)


def _under_unset(ctx: Context, unset: FrozenSet[str]) -> bool:
    """Some guard around ``ctx`` runs its body only when one of ``unset`` is set: `if
    self.device is not None:` or `if self.device:`."""
    current: Optional[Context] = ctx
    while current is not None:
        guard = current.guard
        if guard is not None and guard.positive and not guard.exits and _tests_set(guard.test, unset):
            return True
        current = current.outer
    return False


def _tests_set(test: cst.BaseExpression, unset: FrozenSet[str]) -> bool:
    if (dotted_name(test) or "") in unset:
        return True
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        part = test.comparisons[0]
        return (
            type(part.operator) is cst.IsNot
            and dotted_name(part.comparator) == "None"
            and (dotted_name(test.left) or "") in unset
        )
    return False
