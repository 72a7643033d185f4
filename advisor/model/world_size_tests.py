"""Guards that leave code to a run of one process: `if dist.get_world_size() != 1: raise ...`
at the top of a helper, `if world_size == 1:` around a save. What they guard runs on a single
rank, so rank-0 advice does not apply to it (GPU504)."""

from __future__ import annotations

from advisor.model.facts import Context
from advisor.model.guards import guards_of, launch_tests, single_when, spelled


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
