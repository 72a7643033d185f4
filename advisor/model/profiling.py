"""Profiling that a script does on purpose, as opposed to a profiler left around training code
after a debugging session.

Two signs: the file drives the CUDA profiler itself (`torch.cuda.profiler.start()`, for `nvprof
--profile-from-start off`), which is what `emit_nvtx` ranges are for; or the profiler wraps a
few steps counted in the code (`for _ in range(10):`) and its records are read afterwards
(`prof.key_averages().table(...)`, `prof.export_chrome_trace(...)`). A profiler around a whole
epoch whose table is printed is still a run made slow for a report.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from advisor.model.facts import CallSite
from advisor.model.names import dotted_name

# What a profile object hands back: reading any of these is the point of having profiled.
_RECORD_READERS = frozenset({
    "key_averages", "export_chrome_trace", "export_stacks", "table", "total_average",
    "function_events", "events", "self_cpu_time_total", "export_memory_timeline",
})
_CUDA_PROFILER = ("torch.cuda.profiler.start", "torch.cuda.profiler.profile", "torch.cuda.profiler.init")


def deliberate_profile(model, site: CallSite) -> bool:
    """The profiler call ``site`` is part of a measurement the code makes on purpose."""
    if model.calls_to(*_CUDA_PROFILER):
        return True
    name = _bound_name(model, site.node)
    if name is None or not _few_steps(model.statement_of.get(id(site.node)), site.node):
        return False
    return any(
        (dotted_name(call.receiver) or "") == name and call.ctx.function is site.ctx.function
        for call in model.method_calls(*_RECORD_READERS)
    )


# The most rounds a profiled loop written as `range(k)` runs for a measurement.
_FEW = 1000


def _few_steps(statement, call: cst.Call) -> bool:
    """The `with` block of the profiler holds a loop over `range(k)` for a small literal k."""
    if type(statement) is not cst.With:
        return False
    stack = list(statement.body.body) if type(statement.body) is cst.IndentedBlock else []
    while stack:
        node = stack.pop()
        if type(node) is cst.For:
            rounds = node.iter
            if (type(rounds) is cst.Call and dotted_name(rounds.func) == "range" and len(rounds.args) == 1
                    and type(rounds.args[0].value) is cst.Integer and rounds.args[0].value.evaluated_value <= _FEW):
                return True
        elif type(node) is cst.With:
            stack.extend(node.body.body if type(node.body) is cst.IndentedBlock else ())
    return False


def _bound_name(model, call: cst.Call) -> Optional[str]:
    """`prof` of `with profile(...) as prof:` (or of `prof = profile(...)`)."""
    statement = model.statement_of.get(id(call))
    if type(statement) is cst.With:
        for item in statement.items:
            if item.item is call and item.asname is not None:
                return dotted_name(item.asname.name)
        return None
    if type(statement) is cst.SimpleStatementLine:
        for small in statement.body:
            if type(small) is cst.Assign and small.value is call and len(small.targets) == 1:
                return dotted_name(small.targets[0].target)
    return None
