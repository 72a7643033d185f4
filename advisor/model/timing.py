"""Whether a statement is part of a measurement: for "this synchronize is there to time GPU
work" (GPU105).

A statement times something when it reads a clock itself (`time.perf_counter()`,
`event.elapsed_time(...)`: `Facts.timing_statements`), or calls a function of the project that
does (`t0 = timer()`, `timer.toc()` on an instance of the file's own `Timer`). A synchronize
inside such a clock-reading helper, outside any loop of it, is the helper's own measurement
(`def time_synchronized(): torch.cuda.synchronize(); return time.time()`), and so is one in the
body of `with Timer(...):` whose project class reads the clock in `__enter__` or `__exit__`.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from advisor.model.builder import TIMING_FUNCTIONS
import libcst as cst

from advisor.model.facts import CallSite, FunctionInfo
from advisor.model.names import dotted_name
from advisor.model.subtree import contains

# How many statements apart a synchronize and the clock read it serves may be. A clock read
# after it may sit further: the end-of-step timer often comes after a few meter updates
# (`torch.cuda.synchronize()`, three bookkeeping lines, then `batch_time.update(time.time() - end)`).
NEAR = 3
NEAR_AFTER = 5
# Further after it, when nothing between the two runs training work (the meter updates of a
# logging block: `loss_meter.update(loss.item(), n)`, ...).
FAR_AFTER = 10
_TRAINING_WORK = frozenset({"backward", "step", "zero_grad", "forward"})


def reads_clock(info: FunctionInfo) -> bool:
    """The function's own body reads a clock."""
    return any(s.qualname in TIMING_FUNCTIONS or s.method == "elapsed_time" for s in info.sites)


def _calls_by_statement(model) -> Dict[Tuple[int, int], List[CallSite]]:
    out: Dict[Tuple[int, int], List[CallSite]] = {}
    for site in model.facts.calls:
        out.setdefault(site.stmt, []).append(site)
    return out


def _calls_clock_helper(model, site: CallSite) -> bool:
    if site.qualname in TIMING_FUNCTIONS:
        return False  # a direct read: already in `timing_statements`
    return any(reads_clock(info) for _, info in model.calls.targets(site))


def _trains_between(model, block: int, start: int, end: int) -> bool:
    by_statement = model.shared("timing.calls-by-statement", _calls_by_statement)
    return any(
        other.method in _TRAINING_WORK for i in range(start + 1, end) for other in by_statement.get((block, i), ())
    )


def near_timing(model, site: CallSite, through_callers: bool = True) -> bool:
    """``site`` sits within `NEAR` statements of a clock read in its block (`NEAR_AFTER` when the
    read follows it), or inside a
    clock-reading helper that does not train, outside the helper's loops; or in a small helper
    of the file outside its loops (`def sync(device): if device.type == "cuda":
    torch.cuda.synchronize(device)`) each of whose calls is itself next to a clock read (`sync(device)`
    then `profiler.tick("Forward pass")`)."""
    if _near_clock(model, site):
        return True
    function = site.ctx.function
    if not through_callers or function is None or site.ctx.loop is not None or model.trains(function):
        return False
    callers = model.callers(function)
    return bool(callers) and all(near_timing(owner, call, through_callers=False) for owner, call in callers)


def _near_clock(model, site: CallSite) -> bool:
    block, index = site.stmt
    # A synchronize that is all an `if` holds (`if device == "cuda": torch.cuda.synchronize()`)
    # stands where that `if` stands.
    block, index = model.facts.small_if_bodies.get(block, (block, index))
    reads = model.facts.timing_statements.get(block, ())
    if any(-NEAR <= i - index <= NEAR_AFTER for i in reads):
        return True
    later = [i for i in reads if NEAR_AFTER < i - index <= FAR_AFTER]
    if later and not _trains_between(model, block, index, min(later)):
        return True
    function = site.ctx.function
    if function is not None and site.ctx.loop is None and reads_clock(function) and not model.trains(function):
        return True
    by_statement = model.shared("timing.calls-by-statement", _calls_by_statement)
    for i in range(index - NEAR, index + NEAR_AFTER + 1):
        if any(_calls_clock_helper(model, other) for other in by_statement.get((block, i), ())):
            return True
    return _in_timed_block(model, site)


def _in_timed_block(model, site: CallSite) -> bool:
    """``site`` is in the body of `with Timer(...):` where the project's `Timer` reads the clock
    as the block starts or ends (its `__enter__` or `__exit__`)."""
    items = model.shared("timing.timed-with-items", _timed_with_items).get(id(site.ctx.function), ())
    for item in items:
        statement = model.statement_of.get(id(item.node))
        if type(statement) is cst.With and contains(statement.body, site.node):
            return True
    return False


def _timed_with_items(model) -> Dict[int, List[CallSite]]:
    """The `with Timer(...)` items of the file, by the function they sit in."""
    out: Dict[int, List[CallSite]] = {}
    for site in model.facts.calls:
        if not site.with_item:
            continue
        found = _class_built(model, site.node)
        if found is None:
            continue
        owner, name = found
        hooks = [owner.facts.functions.get(f"{name}.{hook}") for hook in ("__enter__", "__exit__")]
        if any(h is not None and reads_clock(h) for h in hooks):
            out.setdefault(id(site.ctx.function), []).append(site)
    return out


def _class_built(model, call: cst.Call):
    """(model, class name) of the project class a call builds: one of this file, or one it
    imports from another module of the project; None otherwise."""
    name = dotted_name(call.func)
    if name is not None and name in model.facts.classes and model.imports.qualify(call.func) is None:
        return model, name
    qual = model.imports.qualify(call.func)
    symbol = model.symbol(qual) if qual is not None else None
    if symbol is not None and symbol.kind == "class":
        return symbol.model, symbol.name
    return None



# Calls that make the host wait until the GPU has finished all queued work.
_DEVICE_WAITS = frozenset({"torch.cuda.synchronize", "torch.cuda.current_stream().synchronize"})


def waited_just_before(model, site: CallSite) -> bool:
    """A `torch.cuda.synchronize()` that times the step (`near_timing`) sits before ``site`` in its block (or the block an `if` of a
    statement or two stands in), within `FAR_AFTER` statements and with no training work
    between: the queue is already empty when ``site`` reads a value back, so the read adds no
    wait of its own (`torch.cuda.synchronize()` for the step timer, then
    `loss_meter.update(loss.item(), n)`)."""
    block, index = model.facts.small_if_bodies.get(site.stmt[0], site.stmt)
    by_statement = model.shared("timing.calls-by-statement", _calls_by_statement)
    for i in range(index - 1, max(-1, index - FAR_AFTER - 1), -1):
        calls = by_statement.get((block, i), ())
        waits = [other for other in calls if other.qualname in _DEVICE_WAITS]
        if waits:
            # Only a timer's synchronize, which GPU105 accepts: one reported itself is to be
            # removed, and the read then waits in its place.
            return any(near_timing(model, wait) for wait in waits)
        if not all(_bookkeeping(other) for other in calls):
            return False  # `out = model(x)` between: the read waits for that
    return False


# What a logging block between the synchronize and the read may call: reads, meters, clocks.
_BOOKKEEPING_METHODS = frozenset({"item", "tolist", "update", "size", "append", "add_scalar", "log", "info", "format"})
_BOOKKEEPING_BUILTINS = frozenset({"len", "float", "int", "print", "isinstance", "str", "round"})


def _bookkeeping(site: CallSite) -> bool:
    return (site.method in _BOOKKEEPING_METHODS or site.qualname in TIMING_FUNCTIONS
            or (site.method is None and dotted_name(site.node.func) in _BOOKKEEPING_BUILTINS))
