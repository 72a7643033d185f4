"""Code that chooses between two spellings of one API: a call on one side of a choice whose other
side calls its replacement is a compatibility fallback, kept for the old versions it exists for.

    scaler = torch.amp.GradScaler("cuda") if TORCH_2_4 else torch.cuda.amp.GradScaler()
    if hasattr(torch.amp, "GradScaler"): ... else: scaler = torch.cuda.amp.GradScaler()
    try: scaler = torch.amp.GradScaler(device) except (AttributeError, TypeError): scaler = torch.cuda.amp.GradScaler()

The three shapes: both calls in one statement (a conditional expression), the two arms of one
`if` (also the rest of a block after `if test: return new()`), and a `try` body that calls the
replacement with the old call in one of its handlers.
"""

from __future__ import annotations

import re
from typing import Callable, FrozenSet, Iterator, Optional, Tuple

from advisor.model.facts import CallSite, Context


def _chain(ctx: Optional[Context]) -> Iterator[Context]:
    while ctx is not None:
        yield ctx
        ctx = ctx.outer


class _Replacements:
    """Where the replacement calls sit: their statements, the `if` arms and the blocks around them."""

    def __init__(self, sites) -> None:
        self.statements = {site.stmt for site in sites}
        arms = set()
        blocks = set()
        for site in sites:
            for ctx in _chain(site.ctx):
                blocks.add(id(ctx))
                if ctx.guard is not None:
                    arms.add((id(ctx.guard.test), ctx.guard.positive))
        self.arms: FrozenSet[Tuple[int, bool]] = frozenset(arms)
        self.blocks: FrozenSet[int] = frozenset(blocks)


def is_fallback(model, site: CallSite, replacements: Callable[[], list], key: str) -> bool:
    """``site`` sits on the other side of a choice from a call ``replacements()`` lists."""
    index = model.shared(f"alternatives:{key}", lambda m: _Replacements(replacements()))
    if not index.statements:
        return False
    if site.stmt in index.statements:
        return True
    handler_tries = model.facts.handler_tries
    for ctx in _chain(site.ctx):
        guard = ctx.guard
        if guard is not None and (id(guard.test), not guard.positive) in index.arms:
            return True
        body = handler_tries.get(id(ctx))
        if body is not None and id(body) in index.blocks:
            return True
    return False


def in_handler(model, ctx: Optional[Context]) -> bool:
    """The code sits in an `except` arm: what it does is the stand-in for when the `try` body
    failed (`except AttributeError: return torch.cuda.amp.autocast` on an old torch)."""
    handlers = model.facts.handler_tries
    return any(id(outer) in handlers for outer in _chain(ctx))


# A test of which torch is installed: `torch.__version__.startswith("2")`,
# `version.parse(torch.__version__) >= ...`, `hasattr(torch, "amp")`.
_VERSION_TEST = re.compile(r"__version__|\bTORCH_VERSION\b|\bhasattr\(\s*torch\b")


def under_version_test(model, ctx: Optional[Context]) -> bool:
    """The code sits in an arm of a test of the installed torch's version: what it spells is
    chosen for that version (`else: autocast = torch.cuda.amp.autocast` on torch 1.x)."""
    for outer in _chain(ctx):
        guard = outer.guard
        if guard is not None and _VERSION_TEST.search(model.code(guard.test)):
            return True
    return False
