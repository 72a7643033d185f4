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

from bisect import bisect_left
from typing import Dict, List, Optional, Tuple

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
    """A `torch.cuda.synchronize()` that times the step (`near_timing`), or a project helper that
    synchronizes and reads the clock (`t = record_time()`), runs before ``site`` on every path to
    it, with only bookkeeping between: the queue is already empty when ``site`` reads a value
    back, so the read adds no wait of its own (`torch.cuda.synchronize()`, meter updates, the
    step timer, then `acc_meter.update(acc.item(), n)`, or a rank-0 block of
    `writer.add_scalar(..., loss.item(), step)` a few lines further). The synchronize stands in
    the read's block or in a block the read's `if` arms sit in; every call the function makes
    between the two (in source order, nested ones included) is a read, a meter, a clock or a
    log. A synchronize GPU105 reports is to be removed, and the read then waits in its place:
    it keeps its warning."""
    # What the read's own expression computes runs after the synchronize too
    # (`reduce_tensor(loss).item()` queues an all-reduce, then waits for it; `out["loss"].mean()`
    # one small kernel).
    if not queues_little(model, site):
        return False
    orders, calls = model.shared("timing.calls-by-function", _calls_by_function).get(id(site.ctx.function), ((), ()))
    at = bisect_left(orders, site.order)
    for other in reversed(calls[max(0, at - _BOOKKEEPING_CALLS):at]):
        if _waits(model, other):
            # Only a wait that times the step, which GPU105 accepts: one it reports is to be
            # removed, and the read then waits in its place.
            return _times_the_step(model, other) and _runs_before(model, other.stmt, site.stmt)
        if not _bookkeeping(other):
            return False  # `out = model(x)` between: the read waits for that
    return False


def read_just_before(model, site: CallSite, reads: Dict[int, CallSite], matches=None) -> Optional[CallSite]:
    """An earlier read of ``reads`` (call-node ids to their sites: reads that wait for the GPU)
    that runs before ``site`` on every path to it, in an earlier statement, with only bookkeeping
    between (`train_loss += loss.item()`, then `print(..., loss.item())`): the queue is
    already empty when ``site`` reads, so it waits for nothing of its own. With ``matches``,
    only such a read for which it holds (one of the same value), walking past the others."""
    if not queues_little(model, site):
        return None
    orders, calls = model.shared("timing.calls-by-function", _calls_by_function).get(id(site.ctx.function), ((), ()))
    at = bisect_left(orders, site.order)
    window = calls[max(0, at - _BOOKKEEPING_CALLS):at]
    for other in reversed(window):
        if contains(other.node, site.node):
            continue  # `loss.view(-1).cpu().float()`: the cast of the read's own result runs after it
        earlier = reads.get(id(other.node))
        if earlier is not None and earlier.stmt != site.stmt and not contains(other.node, site.node) and (
                matches is None or matches(earlier)):
            if any(call is not other and contains(call.node, other.node) and not _bookkeeping(call)
                   and not _inside_a_read(call, window, reads) for call in window):
                # `pack(cf, lengths.tolist())`: the call the earlier read feeds runs after it and
                # queues work of its own, which a later read waits for.
                return None
            return earlier if (_runs_before(model, earlier.stmt, site.stmt, strict=True)
                               or _tested_before_arm(model, earlier, site)) else None
        if not _bookkeeping(other) and not _inside_a_read(other, window, reads):
            return None
    return None


def _tested_before_arm(model, earlier: CallSite, site: CallSite) -> bool:
    """The earlier read is in the test of an `if` whose body holds ``site`` (`if loss.item() <
    best: best = loss.item()`): the test ran, and waited, before the arm."""
    statement = model.statement_of.get(id(earlier.node))
    return (type(statement) is cst.If and contains(statement.test, earlier.node)
            and contains(statement.body, site.node))


def _inside_a_read(call: CallSite, window, reads: Dict[int, CallSite]) -> bool:
    """`output.mean()` of an earlier `D_x = output.mean().item()`: part of what that read
    waited for, no work of its own."""
    return call.method in _SMALL_TENSOR_OPS and any(
        id(other.node) in reads and contains(other.node, call.node) for other in window)


def queues_little(model, site: CallSite) -> bool:
    """What the read's own expression computes is bookkeeping or a few small tensor ops on
    values already computed (`loss.item()`, `q.mean().item()`, `(out.argmax(1) == y).float()
    .mean().item()`): the read waits for those kernels only. Not a call of a model or of a
    project function (`model(x).item()`, `reduce_tensor(loss).item()`: real work)."""
    return all(_bookkeeping(call) or call.method in _SMALL_TENSOR_OPS or (call.qualname or "").startswith(("torch.", "math."))
               for call in _own_calls(model, site))


def _own_calls(model, site: CallSite):
    """The calls inside the read's own expression (`reduce_tensor(loss)` of
    `reduce_tensor(loss).item()`), in source order."""
    orders, calls = model.shared("timing.calls-by-function", _calls_by_function).get(id(site.ctx.function), ((), ()))
    inner = bisect_left(orders, site.order) + 1
    while inner < len(calls) and contains(site.node, calls[inner].node):
        yield calls[inner]
        inner += 1


# Tensor methods of one small kernel on a value already computed: reductions, casts, elementwise.
_SMALL_TENSOR_OPS = frozenset({
    "mean", "sum", "max", "min", "norm", "std", "var", "abs", "argmax", "argmin", "float", "double",
    "long", "int", "half", "bool", "detach", "clone", "cpu", "numpy", "squeeze", "unsqueeze", "view",
    "reshape", "flatten", "exp", "log", "sqrt", "pow", "eq", "ne", "gt", "lt", "ge", "le", "mul",
    "add", "sub", "div", "neg", "round", "clamp", "numel", "prod", "any", "all",
})


# How many bookkeeping calls may stand between the synchronize and the read (a logging block
# of meter updates and `add_scalar` calls, each with its own reads).
_BOOKKEEPING_CALLS = 40


def _calls_by_function(model) -> Dict[int, Tuple[List[int], List[CallSite]]]:
    """id of the function (None's id at module level) -> (the orders, the calls) of its calls,
    in source order."""
    grouped: Dict[int, List[CallSite]] = {}
    for site in model.facts.calls:
        grouped.setdefault(id(site.ctx.function), []).append(site)
    out: Dict[int, Tuple[List[int], List[CallSite]]] = {}
    for key, calls in grouped.items():
        calls.sort(key=lambda c: c.order)
        out[key] = ([c.order for c in calls], calls)
    return out


def _waits(model, site: CallSite) -> bool:
    """A call that leaves the GPU's queue empty: a synchronize, or a project helper whose own
    body synchronizes outside any loop of it (`def record_time(): torch.cuda.synchronize();
    return time.time()`)."""
    if site.qualname in _DEVICE_WAITS:
        return True
    if site.qualname is not None and site.qualname.startswith("torch."):
        return False
    return any(_synchronizes(info) for _, info in model.calls.targets(site))


def _times_the_step(model, wait: CallSite) -> bool:
    """A synchronize next to a clock read (`near_timing`), or a project helper that
    synchronizes and reads the clock itself (`t = record_time()`)."""
    if wait.qualname in _DEVICE_WAITS:
        return near_timing(model, wait)
    return any(_synchronizes(info) and reads_clock(info) for _, info in model.calls.targets(wait))


def _synchronizes(info: FunctionInfo) -> bool:
    return any(s.qualname in _DEVICE_WAITS and s.ctx.loop is None for s in info.sites)


def _runs_before(model, wait: Tuple[int, int], read: Tuple[int, int], strict: bool = False) -> bool:
    """The statement at ``wait`` runs before the one at ``read`` whenever that one runs: it sits
    earlier in the read's block, or in a block the read reaches by walking out of `if` arms (a
    synchronize that is all a small `if` holds stands where that `if` stands; with ``strict``,
    not: a read under `if board:` may not run)."""
    block, index = wait if strict else model.facts.small_if_bodies.get(wait[0], wait)
    position = read
    while position is not None:
        if position[0] == block:
            return index < position[1]
        position = model.facts.if_bodies.get(position[0])
    return False


# What a logging block between the synchronize and the read may call: reads, meters, clocks.
_BOOKKEEPING_METHODS = frozenset({
    "item", "tolist", "update", "size", "append", "add_scalar", "log", "info", "format",
    # Text and dict work for the log line (`history.get(key, 0.0)`, `f"{key.capitalize()}"`),
    # and a progress bar's caption: nothing queued on the GPU.
    "get", "items", "keys", "capitalize", "upper", "lower", "title", "strip", "join", "replace",
    "set_description", "set_postfix", "debug", "warning",
})
_BOOKKEEPING_BUILTINS = frozenset({"len", "float", "int", "print", "isinstance", "str", "round"})


def _bookkeeping(site: CallSite) -> bool:
    return (site.method in _BOOKKEEPING_METHODS or site.qualname in TIMING_FUNCTIONS
            or (site.method is None and dotted_name(site.node.func) in _BOOKKEEPING_BUILTINS))
