"""The loops that run a function: around a call of it, in any file of the project, or around a
call of a function that calls it outside its own loops (a `train_one_epoch(...)` that the epoch
loop of the entry script calls, through `run_epoch(...)` perhaps). Two levels of helpers up."""

from __future__ import annotations

from typing import List, Optional, Tuple

from advisor.model.facts import FunctionInfo, LoopInfo

_MAX_DEPTH = 2


def loops_running(model, info: Optional[FunctionInfo], depth: int = 0) -> List[Tuple[object, LoopInfo]]:
    """(file model, loop) pairs, innermost first per call."""
    out: List[Tuple[object, LoopInfo]] = []
    if info is None or depth > _MAX_DEPTH:
        return out
    for owner, site in model.callers(info):
        loop = site.ctx.loop
        if loop is not None:
            while loop is not None:
                out.append((owner, loop))
                loop = loop.parent
        elif site.ctx.function is not None and site.ctx.function is not info:
            out.extend(loops_running(owner, site.ctx.function, depth + 1))
    return out
