"""The arms of a model's `forward` that run only when it is handed no targets.

Many models train and predict through one `forward(x, target=None, return_preds=False)`: with
targets it computes the loss (`if target is not None: out["loss"] = self.compute_loss(...)`),
without them it decodes predictions (`if target is None or return_preds: out["preds"] =
self.postprocessor(...)`). A training step always hands the targets, so the decoding arm is
an inference path, as the `else` of `if self.training:` is. The evidence that a parameter is
such a target is the function's own: some arm taken when it is given computes a loss.
"""

from __future__ import annotations

from typing import FrozenSet, List, Optional

import libcst as cst

from advisor.model.facts import FunctionInfo, Guard
from advisor.model.names import dotted_name
from advisor.model.walk import children


def no_target_arm(guard: Guard, function: Optional[FunctionInfo]) -> bool:
    """The block this guard adds runs only when the function was handed no target: the body
    of `if target is None:` (or of `if target is None or return_preds:`, where the other parts
    are flags a caller must ask for) or the `else` of `if target is not None:`."""
    if function is None or guard.exits:
        return False
    # Asked for every guard around every call site: most functions compute no loss for an
    # optional parameter, and that answer is kept on the function.
    trained = target_parameters(function)
    if not trained:
        return False
    test = guard.test
    if guard.positive:
        parts = _disjuncts(test)
        targets = [p for p in (_none_test(part, cst.Is) for part in parts) if p is not None]
        if not targets:
            return False
        flags = [part for part in parts if _none_test(part, cst.Is) is None]
        defaults = _defaults(function)
        if any(type(f) is not cst.Name or defaults.get(f.value) != "False" for f in flags):
            return False
    else:
        name = _none_test(test, cst.IsNot)
        if name is None:
            return False
        targets = [name]
    return all(t in trained for t in targets)


def target_parameters(function: FunctionInfo) -> FrozenSet[str]:
    """The parameters (default None) for which some arm taken when they are given computes a
    loss (memoised on the function)."""
    found = function.target_params
    if found is None:
        found = function.target_params = _target_parameters(function)
    return found


def _target_parameters(function: FunctionInfo) -> FrozenSet[str]:
    defaults = _defaults(function)
    optional = {name for name, value in defaults.items() if value == "None"}
    if not optional:
        return frozenset()
    found = set()
    stack: List[cst.CSTNode] = [function.node.body]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) is cst.If:
            given = _none_test(node.test, cst.IsNot)
            if given in optional and _mentions_loss(node.body):
                found.add(given)
            missing = _none_test(node.test, cst.Is)
            if missing in optional and node.orelse is not None and _mentions_loss(node.orelse):
                found.add(missing)
        stack.extend(children(node))
    return frozenset(found)


def _defaults(function: FunctionInfo) -> dict:
    """Each parameter with a constant default: "None", "False" or "other"."""
    out = {}
    params = function.node.params
    for param in list(params.params) + list(params.kwonly_params):
        if param.default is None:
            continue
        default = param.default
        out[param.name.value] = default.value if type(default) is cst.Name and default.value in ("None", "False") else "other"
    return out


def _disjuncts(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
        return _disjuncts(test.left) + _disjuncts(test.right)
    return [test]


def _none_test(test: cst.BaseExpression, operator: type) -> Optional[str]:
    """The parameter a `name is None` (or `is not None`, by ``operator``) test names."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    part = test.comparisons[0]
    if type(part.operator) is not operator or type(test.left) is not cst.Name:
        return None
    comparator = part.comparator
    return test.left.value if type(comparator) is cst.Name and comparator.value == "None" else None


def _mentions_loss(block: cst.CSTNode) -> bool:
    """The block binds, calls or stores a loss (`loss = ...`, `self.compute_loss(...)`,
    `out["loss"] = ...`)."""
    stack: List[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef):
            continue
        if type(node) in (cst.Name, cst.Attribute):
            name = dotted_name(node)
            if name is not None and "loss" in name.rsplit(".", 1)[-1].lower():
                return True
        elif type(node) is cst.SimpleString:
            value = node.evaluated_value
            if isinstance(value, str) and "loss" in value.lower():
                return True
        stack.extend(children(node))
    return False
