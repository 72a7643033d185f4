"""Shape checks: a model built on the spot and run on made-up input.

Model files often end with `def test(): net = ResNet18(); y = net(torch.randn(1, 3, 32, 32));
print(y.size())`. Nothing trained is evaluated there: the weights are fresh and the input is
random, so whether dropout or batch norm are in eval mode changes no result anyone reads. The
evaluation rules leave such a call alone.
"""

from __future__ import annotations

import libcst as cst

from advisor.model.facts import Context
from advisor.model.names import VARIABLE, dotted_name

# torch functions that make a tensor out of nothing but a shape.
_MADE_UP = frozenset(
    "torch.randn torch.rand torch.randint torch.zeros torch.ones torch.empty torch.full "
    "torch.randn_like torch.rand_like torch.zeros_like torch.ones_like".split()
)


def _made_up(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """A tensor from a shape only: `torch.randn(1, 3, 32, 32)` in place, or a name bound to one
    on every path."""
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in ("to", "cuda"):
        return _made_up(model, expr.func.value, ctx, order)
    if type(expr) is cst.Call:
        qual = model.imports.qualify(expr.func)
        if qual in VARIABLE and len(expr.args) >= 1 and expr.args[0].keyword is None and not expr.args[0].star:
            return _made_up(model, expr.args[0].value, ctx, order)  # `net(Variable(x))`, older torch
        if qual == "torch.tensor" and expr.args and _number(expr.args[0].value):
            return True  # `timestep = torch.tensor(0)`: a made-up scalar
        return qual in _MADE_UP
    name = dotted_name(expr)
    if not type(expr) is cst.Name or name is None:
        return False
    found = model.reaching(name, ctx, order)
    return bool(found) and all(a.value is not None and a.index is None and _made_up(model, a.value, a.ctx, a.order) for a in found)


def _number(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.UnaryOperation:
        expr = expr.expression
    return type(expr) in (cst.Integer, cst.Float)


def _fresh(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """The model is built by a call in the same function (not a parameter, not loaded), and the
    function loads nothing: no `load_state_dict`, `torch.load`, `from_pretrained`."""
    info = ctx.function
    if not type(expr) is cst.Name:
        return False
    found = model.reaching(expr.value, ctx, order)
    if len(found) != 1 or found[0].index is not None or not type(found[0].value) is cst.Call:
        return False
    if found[0].ctx.function is not info:
        return False
    # The calls of the function, or of the module's top level (`if __name__ == "__main__":`),
    # asked once per scope.
    loads = model.shared("smoke-tests.loading-scopes", _loading_scopes)
    if (info.scope if info is not None else None) in loads:
        return False
    return not any(a.keyword is not None and a.keyword.value == "pretrained" for a in found[0].value.args)


def _loading_scopes(model) -> set:
    """The functions (by scope; None for the module's top level) that call something named like
    a load (`load_state_dict`, `torch.load`, `from_pretrained`), or a callee the analysis cannot
    name."""
    out = set()
    for site in model.facts.calls:
        last = (dotted_name(site.node.func) or "load").rsplit(".", 1)[-1]
        if "load" in last:
            out.add(site.ctx.function.scope if site.ctx.function is not None else None)
    return out


def shape_check(model, call: cst.Call, ctx: Context, order: float) -> bool:
    """`net(torch.randn(1, 3, 32, 32))` on a `net` just built in the same function."""
    args = [a for a in call.args if a.keyword is None and not a.star]
    if not args or not all(_made_up(model, a.value, ctx, order) for a in args):
        return False
    return _fresh(model, call.func, ctx, order)
