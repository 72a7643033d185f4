"""Epoch loops that iterators and generators hide: where a new pass over a DataLoader starts,
again and again, other than a `for` loop over it inside a training epoch loop (which
`FileModel.epoch_loops` already gives).

Each new pass over a DataLoader starts its worker processes afresh (unless `persistent_workers`)
and reads its sampler's order again (a `DistributedSampler` reshuffles only after `set_epoch`).
A pass is repeated, here, when:

- **generator**: a generator function runs it inside one of its loops that goes round more than
  once: any `while` loop, `for _ in range(n)` (unless `n` is a literal 0 or 1) and
  `for _ in itertools.count()`. The pass is a `for` loop over the loader, a `yield from loader`,
  or an `iter(loader)` made again (see below), in that loop:
  `def sample_data(loader): while True: for batch in loader: yield batch`.
- **iterator**: `iter(loader)` runs again inside a training loop (hot or epoch), or in a function
  such a loop calls: with nothing around it in that loop (a new iterator each step, or each
  epoch), in an `except StopIteration:` handler (the last pass ran out: `it = iter(loader)`
  starts the next one), or under a test on a value `next(...)` gave back (`batch = next(it,
  None)`, `if batch is None: it = iter(loader)`).

Not repeated passes (the traps):
- `itertools.cycle(loader)`: it iterates the loader once and replays the batches it kept;
- a generator's `for` over a list of loaders (each is visited once), or a generator over a list;
- an iterator made once and drawn from for the whole run (`it = iter(loader)` before the loop;
  with an infinite sampler this is a single pass);
- `next(iter(loader))` outside training loops: a peek at one batch for its shapes;
- `iter(loader)` under any other test (`if it is None:`, `if step == 0:`): not known to run again.
"""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from advisor.model.facts import CallSite, Context, FunctionInfo, LoopInfo
from advisor.model.loaders import LOADERS, Sites, by_loader_site, loaders_iterated
from advisor.model.names import dotted_name
from advisor.model.walk import children


class Pass:
    """A pass over DataLoaders that starts again and again.

    ``node``: what starts it (a `for` loop, the value of a `yield from`, an `iter(...)` call), in
    ``model``'s file, in ``function``. ``loop``: the loop that starts it again (in ``loop_model``'s
    file: the caller's, for an iterator made in a function a training loop calls). ``how``:
    "generator" or "iterator"."""

    __slots__ = ("model", "node", "loaders", "function", "loop", "loop_model", "how", "periodic")

    def __init__(self, model, node, loaders: Sites, function, loop: LoopInfo, loop_model, how: str,
                 periodic: bool = False) -> None:
        self.model = model
        self.node = node
        self.loaders = loaders
        self.function: Optional[FunctionInfo] = function
        self.loop = loop
        self.loop_model = loop_model
        self.how = how
        # The pass starts again only on some iterations of ``loop`` (`if step % 500 == 0:
        # sample_images()`, whose `next(iter(val_loader))` peeks at one batch).
        self.periodic = periodic


def repeated_passes(model) -> List[Pass]:
    """The repeated passes over loaders that start in this file (memoised per file)."""
    known = model._shared.get("repeated-passes")
    if known is None:
        known = []
        for defs in model.facts.function_defs.values():
            for info in defs:
                if info.generator:
                    known.extend(_generator_passes(model, info))
        known.extend(_iterator_passes(model))
        model._shared["repeated-passes"] = known
    return known


def _goes_round(model, loop: LoopInfo) -> bool:
    """A generator's loop that goes round more than once: `while`, `range(n)`, `itertools.count()`."""
    node = loop.node
    if type(node) is cst.While:
        return True
    iterable = node.iter
    if not type(iterable) is cst.Call:
        return False
    name = model.imports.qualify(iterable.func) or dotted_name(iterable.func)
    if name == "itertools.count":
        return True
    return name == "range" and bool(iterable.args) and not _one_round(loop)


def _one_round(loop: LoopInfo) -> bool:
    """`for _ in range(1)` (or `range(0)`)."""
    node = loop.node
    if not type(node) is cst.For or not type(node.iter) is cst.Call or len(node.iter.args) != 1:
        return False
    func, bound = node.iter.func, node.iter.args[0].value
    return (
        type(func) is cst.Name and func.value == "range"
        and type(bound) is cst.Integer and int(bound.evaluated_value) <= 1
    )


def _innermost(loop: Optional[LoopInfo], rounds: List[LoopInfo]) -> Optional[LoopInfo]:
    """The innermost of ``rounds`` that ``loop`` is or sits in."""
    while loop is not None:
        if any(loop is r for r in rounds):
            return loop
        loop = loop.parent
    return None


def _generator_passes(model, info: FunctionInfo) -> List[Pass]:
    rounds = [loop for loop in info.loops if _goes_round(model, loop)]
    if not rounds:
        return []
    out: List[Pass] = []
    for loop in info.loops:
        around = _innermost(loop.parent, rounds)
        if around is None or not type(loop.node) is cst.For:
            continue
        found = loaders_iterated(model, loop)
        if found[0]:
            out.append(Pass(model, loop.node, found, info, around, model, "generator"))
    for site in info.yields_from:
        around = _innermost(site.ctx.loop, rounds)
        if around is not None:
            found = model.values.ask(LOADERS, site.value, site.ctx, site.order)
            if found[0]:
                out.append(Pass(model, site.value, found, info, around, model, "generator"))
    for site in _iter_calls(model, info.sites):
        around = _innermost(site.ctx.loop, rounds)
        if around is not None and _runs_again(model, site.ctx, around, None):
            found = _iterated(model, site)
            if found[0]:
                out.append(Pass(model, site.node, found, info, around, model, "generator"))
    return out


def _iterator_passes(model) -> List[Pass]:
    out: List[Pass] = []
    for site in _iter_calls(model, model.facts.calls_by_callee.get("iter", ())):
        function = site.ctx.function
        if function is not None and function.generator:
            continue  # a generator's own loops decide (above)
        found = None
        loop = model.enclosing_training_loop(site.ctx)
        if loop is not None:
            if not _one_round(loop) and _runs_again(model, site.ctx, loop, None):
                found = _iterated(model, site)
                if found[0]:
                    out.append(Pass(model, site.node, found, function, loop, model, "iterator",
                                    model.guards.periodic(site.ctx)))
            continue
        if function is None or site.ctx.loop is not None or not _runs_again(model, site.ctx, None, function):
            continue
        for caller_model, call in model.callers(function):
            outer = caller_model.enclosing_training_loop(call.ctx)
            if outer is None or _one_round(outer):
                continue
            found = found or _iterated(model, site)
            if found[0]:
                periodic = all(
                    m.guards.periodic(c.ctx) for m, c in model.callers(function)
                    if m.enclosing_training_loop(c.ctx) is not None
                )
                out.append(Pass(model, site.node, found, function, outer, caller_model, "iterator", periodic))
            break
    return out


def _iter_calls(model, sites) -> List[CallSite]:
    """Python's own `iter(iterable)` among these calls."""
    out = []
    for site in sites:
        node = site.node
        if (
            type(node.func) is cst.Name
            and node.func.value == "iter"
            and site.qualname is None
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
            and model.bindings.function("iter", site.ctx, site.order) is None
        ):
            out.append(site)
    return out


def _iterated(model, site: CallSite) -> Sites:
    return model.values.ask(LOADERS, site.node.args[0].value, site.ctx, site.order)


def _runs_again(model, ctx: Context, loop: Optional[LoopInfo], function: Optional[FunctionInfo]) -> bool:
    """The blocks between ``ctx`` and the body of ``loop`` (or of ``function``) run whenever the
    loop goes round: none of them is a test, other than an `except StopIteration:` handler or
    a test on a value `next(...)` gave back."""
    handlers = model.facts.handlers
    drawn = _drawn_names(ctx.loop)
    current: Optional[Context] = ctx
    while current is not None:
        outer = current.outer
        if loop is not None and current.loop is loop and (outer is None or outer.loop is not loop):
            return True  # the loop's own body
        if function is not None and current is function.body_ctx:
            return True
        if outer is None:
            return False
        if current.guard is not None and current.guard is not outer.guard:
            if not (_names_read(current.guard.test) & drawn):
                return False
        elif id(current) in handlers:
            if not handlers[id(current)]:
                return False
        elif current.conditional and not outer.conditional:
            return False  # a `try: ... else:` or a loop's `else:`
        current = outer
    return False


def _drawn_names(loop: Optional[LoopInfo]) -> Set[str]:
    names: Set[str] = set()
    while loop is not None:
        names.update(loop.drawn)
        loop = loop.parent
    return names


def _names_read(test: cst.BaseExpression) -> Set[str]:
    out: Set[str] = set()
    stack: List[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            out.add(node.value)
        else:
            stack.extend(children(node))
    return out


def passes_over(model, site: CallSite) -> List[Pass]:
    """The repeated passes, in this file and in the project files around it, over a DataLoader
    site of this file (whether or not every path of their iterable is that loader)."""
    index = by_loader_site(model, "passes-over", lambda other: ((item, item.loaders[0]) for item in repeated_passes(other)))
    return index.get(id(site), [])


def describe(model, item: Pass) -> Tuple[str, dict, list]:
    """When a pass starts again, for a message read in ``model``'s file: a template part, its
    fields, and the related place (when it is in this file, the message names its line)."""
    if item.how == "generator" and item.function is not None:
        where, related = _place(model, item.model, item.loop.node, "generator loop")
        return ("each time the generator `{generator}` goes round its loop at " + where,
                {"generator": item.function.node.name.value}, related)
    where, related = _place(model, item.model, item.node, "new iterator")
    return "each time `iter(...)` at " + where + " makes a new iterator", {}, related


def _place(model, owner, node, label: str) -> Tuple[str, list]:
    if owner is model:
        return "line {line[" + label + "]}", [(node, label)]
    name = owner.display_name().replace("{", "{{").replace("}", "}}")
    return f"{name}:{owner.line_of(node)}", []
