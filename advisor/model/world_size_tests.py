"""Guards that leave code to a run of one process: `if dist.get_world_size() != 1: raise ...`
at the top of a helper, `if world_size == 1:` around a save, `if not args.distributed:`. What
they guard runs on a single rank, so rank-0 advice does not apply to it (GPU504, GPU502)."""

from __future__ import annotations

from advisor.model.facts import Context
from advisor.model.guards import guards_of, single_when


def single_process_only(ctx: Context, model=None) -> bool:
    """A guard around ``ctx`` lets it run only in a run of one process: a world-size test, or
    (given the file's ``model``) the false side of a launch test or of a switch named for
    distributed runs (`GuardKinds.single_process_arm`, the one reading of such guards)."""
    for guard in guards_of(ctx):
        if model is not None:
            if model.guards.single_process_arm(guard):
                return True
            continue
        holds = single_when(guard.test)
        if holds is not None and holds == (guard.positive and not guard.exits):
            return True
    return False
