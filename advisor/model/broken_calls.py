"""Scripts that stop before they train: on the way from `if __name__ == "__main__":` to their
loops, they call a function of the project with arguments it cannot take (`load_data(a, b, c)`
for a `def load_data(a, b, c, chunk_size)` that a newer script of the project grew one more
required parameter for). Python raises `TypeError` there, every time: what the rest of the
script would cost is no cost of any run. Research repositories keep such stale scripts beside
the ones they ship.

Only calls that always run count: in the main block or in a function it calls, outside every
`if`, loop and `try` of that function, with no `*args`/`**kwargs` spread, of a plain function
(no decorator that could change how it is called, not a method) whose signature says for sure
that the call fails.
"""

from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from advisor.model.facts import CallSite, Context, FunctionInfo
from advisor.model.names import is_main_test


def stops_at_start(model) -> bool:
    """The script's entry path calls a project function with arguments it cannot take."""
    return model.shared("stops-at-start", _stops_at_start)


def _stops_at_start(model) -> bool:
    if model.project is None or not model.facts.main_blocks:
        return False
    entries = _entry_functions(model)
    for site in model.facts.calls:
        if not _always_runs(model, site, entries):
            continue
        targets = model.calls.targets(site)
        if len(targets) != 1:
            continue
        _, info = targets[0]
        if info.class_name is None and not info.decorators and _refuses(info, site.node):
            return True
    return False


def _entry_functions(model) -> Set[int]:
    """The functions of the file the main block calls outside its own tests and loops."""
    out: Set[int] = set()
    for site in model.facts.calls:
        if site.ctx.function is not None or not _in_main_block(model, site.node) or _branched(site.ctx, None):
            continue
        func = site.node.func
        if type(func) is cst.Name:
            info = model.bindings.function(func.value, site.ctx, site.order)
            if info is not None and info.class_name is None:
                out.add(id(info))
    return out


def _in_main_block(model, node: cst.CSTNode) -> bool:
    return id(node) in model.shared("main-block-nodes", _main_block_nodes)


def _main_block_nodes(model) -> Set[int]:
    out: Set[int] = set()
    stack: List[cst.CSTNode] = list(model.facts.main_blocks)
    while stack:
        node = stack.pop()
        out.add(id(node))
        stack.extend(node.children)
    return out


def _always_runs(model, site: CallSite, entries: Set[int]) -> bool:
    info = site.ctx.function
    if info is None:
        return _in_main_block(model, site.node) and not _branched(site.ctx, None)
    return id(info) in entries and not _branched(site.ctx, info)


def _branched(ctx: Optional[Context], info: Optional[FunctionInfo]) -> bool:
    """Under a test, in a loop or in a `try` (of ``info``'s body, or of the main block)."""
    if ctx is None:
        return False
    if ctx.loop is not None or ctx.in_try:
        return True
    current = ctx
    while current is not None and current.function is info:
        if current.guard is not None and current.guard.ctx.function is info:
            if not is_main_test(current.guard.test):
                return True
        current = current.outer
    return False


def _refuses(info: FunctionInfo, call: cst.Call) -> bool:
    """Python raises `TypeError` for this call of ``info``: a required parameter left out, more
    positional arguments than it takes, or a keyword it does not know."""
    if any(arg.star for arg in call.args):
        return False
    params = info.node.params
    positional = [*params.posonly_params, *params.params]
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
