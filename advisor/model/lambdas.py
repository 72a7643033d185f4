"""Names bound to lambdas that hand their one argument on, as it is or wrapped: `iter_wrapper =
(lambda x: tqdm(x, total=n)) if args.tqdm else (lambda x: x)`, then `for b in
iter_wrapper(enumerate(loader))`. A call of such a name is followed to its argument, by the
questions that see through the wrappers the lambdas use (a progress bar)."""

from __future__ import annotations

from typing import Collection, Iterator, Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.names import dotted_name, last_segment


def passed_on(model, call: cst.Call, ctx: Context, order: float, wrappers: Collection[str]) -> Optional[cst.BaseExpression]:
    """The argument of ``call`` when every binding of the called name that reaches it is such a
    lambda (or a conditional choice between them); None otherwise."""
    func = call.func
    if type(func) is not cst.Name or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    reach = model.bindings.reaching(func.value, ctx, order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return None
    for assignment in reach.assignments:
        if assignment.value is None or assignment.index is not None or assignment.augmented:
            return None
        if not all(_hands_on(model, arm, wrappers) for arm in _arms(assignment.value)):
            return None
    return call.args[0].value


def _arms(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if type(expr) is cst.IfExp:
        yield from _arms(expr.body)
        yield from _arms(expr.orelse)
    else:
        yield expr


def _hands_on(model, expr: cst.BaseExpression, wrappers: Collection[str]) -> bool:
    """`lambda x: x`, `lambda x: tqdm(x, total=n)`."""
    if type(expr) is not cst.Lambda:
        return False
    params = expr.params
    if (len(params.params) != 1 or params.posonly_params or params.kwonly_params
            or isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.star_kwarg is not None):
        return False
    name = params.params[0].name.value
    body = expr.body
    if type(body) is cst.Name:
        return body.value == name
    if type(body) is not cst.Call or not body.args:
        return False
    first = body.args[0]
    if first.keyword is not None or first.star or type(first.value) is not cst.Name or first.value.value != name:
        return False
    return last_segment(model.imports.qualify(body.func) or dotted_name(body.func)) in wrappers
