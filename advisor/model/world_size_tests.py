"""Guards that leave code to a run of one process: `if dist.get_world_size() != 1: raise ...`
at the top of a helper, `if world_size == 1:` around a save. What they guard runs on a single
rank, so rank-0 advice does not apply to it (GPU504)."""

from __future__ import annotations

from typing import FrozenSet

import libcst as cst

from advisor.model.facts import Context
from advisor.model.guards import guards_of, single_when

INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


def single_process_only(ctx: Context, model=None) -> bool:
    """A guard around ``ctx`` lets it run only in a run of one process: a world-size test, or
    (given the file's ``model``) the `else` of a launch test (see ``launch_tests``)."""
    for guard in guards_of(ctx):
        holds = single_when(guard.test)
        if holds is None:
            if (model is not None and not guard.positive and not guard.exits
                    and spelled(model, guard.test) in launch_tests(model)):
                return True
            continue
        runs_when = guard.positive and not guard.exits
        if holds == runs_when:
            return True
    return False


def launch_tests(model) -> FrozenSet[str]:
    """The tests (as written, spaces and outer brackets aside) whose true arm starts the process
    group (`if parallel == True:` around `init_process_group(...)`): wherever the same test is
    false, the script runs as one process (`else: loader = DataLoader(ds, shuffle=True)`,
    `else: trainer.save()`)."""
    return model.shared("launch-tests", _launch_tests)


def _launch_tests(model) -> FrozenSet[str]:
    found = set()
    for site in model.calls_to(INIT_PROCESS_GROUP):
        guard = next((g for g in guards_of(site.ctx) if g.ctx.function is site.ctx.function), None)
        if guard is not None and guard.positive and not guard.exits:
            found.add(spelled(model, guard.test))
    return frozenset(found)


def spelled(model, test: cst.BaseExpression) -> str:
    return "".join(model.code(test).split()).strip("()")

