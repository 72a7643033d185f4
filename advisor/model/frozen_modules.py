"""Modules whose parameters are all frozen where they are wrapped or used.

A moving-average copy of a generator (`self.avgG = deepcopy(G)`, then `for p in
self.avgG.parameters(): p.requires_grad = False`), a frozen teacher, a feature extractor for a
perceptual loss: the code turns every parameter's gradient off by name, in the same function,
before it wraps or uses the module. Nothing trains it, whatever loop calls it (GPU505).
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.instances import instances_of
from advisor.model.names import dotted_name
from advisor.model.value_flow import argument, parameter_default


def frozen_before(model, name: Optional[str], ctx: Context, order: float) -> bool:
    """Earlier in the function of ``ctx``, and outside any branch of its own, the module held in
    ``name`` had every parameter frozen: `for p in name.parameters(): p.requires_grad = False`
    (or `p.requires_grad_(False)`), or `name.requires_grad_(False)`."""
    function = ctx.function
    if name is None or function is None:
        return False
    top = {id(statement) for statement in function.node.body.body}
    for loop in model.facts.loops:
        if (loop.function is function and id(loop.node) in top and model.order_of(loop.node) < order
                and _freezes_each_parameter(loop.node, name)):
            return True
    for site in model.facts.calls_by_method.get("requires_grad_", ()):
        if (site.ctx.function is function and site.order < order and site.receiver_name == name
                and id(model.statement_of.get(id(site.node))) in top and _false_argument(site.node)):
            return True
    return False


def _freezes_each_parameter(loop: cst.CSTNode, name: str) -> bool:
    return any(type(value) is cst.Name and value.value == "False" for value in _grad_switches(loop, name))


def _grad_switches(loop: cst.CSTNode, name: str) -> List[cst.BaseExpression]:
    """What `for p in name.parameters():` sets each parameter's `requires_grad` to, written out
    in its body (`p.requires_grad = flag`, `p.requires_grad_(flag)`; a `requires_grad_()` with
    no argument turns it on)."""
    if type(loop) is not cst.For or type(loop.target) is not cst.Name or type(loop.iter) is not cst.Call:
        return []
    iterated = loop.iter
    if (type(iterated.func) is not cst.Attribute or iterated.func.attr.value != "parameters"
            or dotted_name(iterated.func.value) != name):
        return []
    param = loop.target.value
    out: List[cst.BaseExpression] = []
    for statement in loop.body.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if (type(small) is cst.Assign and len(small.targets) == 1
                    and dotted_name(small.targets[0].target) == f"{param}.requires_grad"):
                out.append(small.value)
            elif (type(small) is cst.Expr and type(small.value) is cst.Call
                    and dotted_name(small.value.func) == f"{param}.requires_grad_"):
                out.append(cst.Name("False") if _false_argument(small.value) else cst.Name("True"))
    return out


def _false_argument(call: cst.Call) -> bool:
    """One argument, `False`, given by position or as `requires_grad=False`."""
    if len(call.args) != 1:
        return False
    arg = call.args[0]
    keyword_ok = arg.keyword is None or arg.keyword.value == "requires_grad"
    return keyword_ok and type(arg.value) is cst.Name and arg.value.value == "False"


def built_frozen(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every project class the value may be an instance of freezes its own parameters in
    `__init__`, at the top of its body (`for param in self.parameters(): param.requires_grad =
    requires_grad` with `requires_grad=False` as the default, which no construction of the
    project changes): a feature extractor built frozen, whose calls record no graph of their own."""
    found = instances_of(model, expr, ctx, order)
    return bool(found) and all(_freezes_itself(owner, cls) for owner, cls in found)


def _freezes_itself(owner, cls) -> bool:
    init = owner.facts.functions.get(f"{cls.name}.__init__")
    if init is None:
        return False
    for statement in init.node.body.body:
        if _freezes_each_parameter(statement, "self"):
            return True
        flag = _frozen_by_parameter(statement, init)
        if flag is not None:
            return _never_passed_true(owner, init, flag)
    return False


def _frozen_by_parameter(statement: cst.CSTNode, init) -> Optional[str]:
    """`for param in self.parameters(): param.requires_grad = flag` where `flag` is a parameter
    of `__init__` whose default is False: that parameter's name."""
    for value in _grad_switches(statement, "self"):
        if type(value) is cst.Name and value.value in init.params:
            default = parameter_default(init, value.value)
            if type(default) is cst.Name and default.value == "False":
                return value.value
    return None


def _never_passed_true(owner, init, flag: str) -> bool:
    """Every construction of the class the project makes leaves ``flag`` out or passes False
    (and there is at least one)."""
    constructions = owner.calls.constructions(init)
    if not constructions:
        return False
    position = init.params.index(flag) - init.receiver_params
    for _, site in constructions:
        if any(a.star for a in site.node.args):
            return False
        given = argument(site.node, flag, position)
        if given is not None and not (type(given.value) is cst.Name and given.value.value == "False"):
            return False
    return True
