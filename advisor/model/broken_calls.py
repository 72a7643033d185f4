"""Scripts that stop before they train: on the way from `if __name__ == "__main__":` to their
loops, they call a function of the project with arguments it cannot take (`load_data(a, b, c)`
for a `def load_data(a, b, c, chunk_size)` that a newer script of the project grew one more
required parameter for). Python raises `TypeError` there, every time: what the rest of the
script would cost is no cost of any run. Research repositories keep such stale scripts beside
the ones they ship. So is a script whose training loop, in its first round, calls a module of
the project with arguments its `forward` cannot take (`output = margin(feature)` where every
class `margin` may be has `forward(self, x, label)`): it stops at the first batch.

Only calls that always run before the script trains count: statements of the main block, and
of the file's functions it calls, read in order until one loops, trains (calls code that
does) or leaves (`return`, `raise`, `sys.exit`); calls inside an `if`, a `with`, a `try`, a
conditional expression, an `and`/`or`, a lambda or a comprehension are skipped; the callee is a
plain function (not a method, no decorator that could change how it is called) whose
signature says for sure that the call fails (no `*args`/`**kwargs` spread in the call).
"""

from __future__ import annotations

from typing import Iterator, List, Optional

import libcst as cst

from advisor.model.facts import FunctionInfo
from advisor.model.names import dotted_name

# Where the walk of a statement stops: what runs there may not run at all.
_CONDITIONAL = (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                cst.GeneratorExp)
_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})
_REFUSES, _TRAINS = "refuses", "trains"


def stops_at_start(model) -> bool:
    """The script's entry path calls a project function with arguments it cannot take."""
    return model.shared("stops-at-start", _stops_at_start)


def _stops_at_start(model) -> bool:
    if model.project is None or not model.facts.main_blocks:
        return False
    return any(_body(model, block.body.body, 0) == _REFUSES for block in model.facts.main_blocks)


def _body(model, statements, depth: int) -> Optional[str]:
    """_REFUSES when a statement refuses its call before the body loops, trains or leaves;
    _TRAINS when it trains (or loops, or leaves) first; None when it does neither."""
    for statement in statements:
        if type(statement) in (cst.For, cst.While):
            # Its first round: a module called with arguments its `forward` cannot take stops
            # the script at the first batch (`output = margin(feature)` for a `forward(self, x,
            # label)`), as a stale copy of a training script kept beside the new one does.
            return _first_round(model, statement.body.body)
        if type(statement) is not cst.SimpleStatementLine:
            if _holds_training(model, statement):
                return _TRAINS
            continue  # an `if`, a `with`, a `try`, a `def`: its calls may not run
        for small in statement.body:
            if type(small) in (cst.Return, cst.Raise):
                return _TRAINS
            for call in _plain_calls(small):
                verdict = _call(model, call, depth)
                if verdict is not None:
                    return verdict
            if type(small) is cst.Expr and type(small.value) is cst.Call and dotted_name(small.value.func) in _EXITS:
                return _TRAINS
    return None


def _first_round(model, statements) -> str:
    """_REFUSES when a statement of a loop's body, read in order into the loops and `with`
    blocks it holds, calls a module whose every possible `forward` refuses the arguments,
    before anything conditional could leave the round; _TRAINS otherwise."""
    for statement in statements:
        if type(statement) in (cst.For, cst.While):
            return _first_round(model, statement.body.body)
        if type(statement) is cst.With:
            verdict = _first_round(model, statement.body.body)
            if verdict == _REFUSES:
                return verdict
            continue
        if type(statement) is not cst.SimpleStatementLine:
            continue  # an `if` or a `try`: what it runs may not run, and it may leave the round
        for small in statement.body:
            if type(small) in (cst.Return, cst.Raise, cst.Continue, cst.Break):
                return _TRAINS
            for call in _plain_calls(small):
                if _module_refuses(model, call):
                    return _REFUSES
    return _TRAINS


def _module_refuses(model, call: cst.Call) -> bool:
    """`margin(feature)` where `margin` may be one of several modules of the project, each
    of whose `forward` needs an argument more (or fewer)."""
    if type(call.func) is not cst.Name:
        return False
    site = model.site_of(call)
    if site is None:
        return False
    targets = model.calls.targets(site)
    return bool(targets) and all(
        info.class_name is not None and info.node.name.value == "forward" and not info.decorators
        and _refuses(info, call)
        for _, info in targets
    )


def _call(model, call: cst.Call, depth: int) -> Optional[str]:
    site = model.site_of(call)
    if site is None:
        return None
    targets = model.calls.targets(site)
    if len(targets) != 1:
        return _TRAINS if any(owner.trains(info) or info.loops for owner, info in targets) else None
    owner, info = targets[0]
    if info.class_name is None and not info.decorators and _refuses(info, call):
        return _REFUSES
    if owner is model and depth < 2 and info.class_name is None:
        verdict = _body(model, info.node.body.body, depth + 1)
        if verdict is not None:
            return verdict
    return _TRAINS if owner.trains(info) or info.loops else None


def _plain_calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    """The calls of a simple statement that always run: not in a conditional expression, an
    `and`/`or`, a lambda or a comprehension."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, _CONDITIONAL):
            continue
        if type(current) is cst.Call:
            yield current
        stack.extend(current.children)


def _holds_training(model, statement: cst.CSTNode) -> bool:
    """A loop, or a call of code that trains, somewhere in a compound statement."""
    stack: List[cst.CSTNode] = [statement]
    while stack:
        current = stack.pop()
        if type(current) in (cst.For, cst.While):
            return True
        if type(current) is cst.Call:
            site = model.site_of(current)
            if site is not None and any(owner.trains(info) for owner, info in model.calls.targets(site)):
                return True
        if type(current) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(current.children)
    return False


def _refuses(info: FunctionInfo, call: cst.Call) -> bool:
    """Python raises `TypeError` for this call of ``info``: a required parameter left out, more
    positional arguments than it takes, or a keyword it does not know."""
    if any(arg.star for arg in call.args):
        return False
    params = info.node.params
    positional = [*params.posonly_params, *params.params][info.receiver_params:]
    star_args = type(params.star_arg) is cst.Param
    star_kwargs = params.star_kwarg is not None
    given = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if len(given) > len(positional) and not star_args:
        return True
    names = {p.name.value for p in (*positional, *params.kwonly_params)}
    if not star_kwargs and keywords - names:
        return True
    for index, param in enumerate(positional):
        if index >= len(given) and param.default is None and param.name.value not in keywords:
            return True
    return any(p.default is None and p.name.value not in keywords for p in params.kwonly_params)
