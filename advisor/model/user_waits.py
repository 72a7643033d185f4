"""Loops that wait for a person: each pass shows something and waits for a key, a prompt or a
plot window (`cv2.waitKey`, `input()`, `plt.show()`, a debugger). A loader read in such a loop
hands over a batch per keystroke; how fast its batches load or copy is not what the loop waits
for."""

from __future__ import annotations

from typing import Set

from advisor.model.facts import LoopInfo

# What a pass blocks on until someone acts (qualified names, and builtins by their bare name).
_WAITS = frozenset(
    {
        "cv2.waitKey",
        "cv2.waitKeyEx",
        "matplotlib.pyplot.show",
        "matplotlib.pyplot.waitforbuttonpress",
        "matplotlib.pyplot.ginput",
        "pdb.set_trace",
        "ipdb.set_trace",
    }
)
_BUILTIN_WAITS = ("input", "breakpoint")


def waits_for_user(model, loop: LoopInfo) -> bool:
    """Some call in the loop's body (in the same function, nested loops included) waits for a
    person on every pass: no test stands between the body and the call."""
    return id(loop) in model.shared("user-waiting-loops", _waiting_loops)


def _waiting_loops(model) -> Set[int]:
    waiting: Set[int] = set()
    sites = [s for q in _WAITS for s in model.calls_to(q)]
    for name in _BUILTIN_WAITS:
        sites += [
            s for s in model.facts.calls_by_callee.get(name, ())
            if model.imports.qualify(s.node.func) is None and model.bindings.function(name, s.ctx, s.order) is None
        ]
    for site in sites:
        loop = site.ctx.loop
        while loop is not None and id(loop) not in waiting and _every_pass(model, site, loop):
            waiting.add(id(loop))
            loop = loop.parent
    return waiting


def _every_pass(model, site, loop: LoopInfo) -> bool:
    """No `if` or handler between the loop's body and the call: a debugger entered when a file
    exists, every few steps, is no wait on every pass."""
    ctx = site.ctx
    while ctx is not None and ctx.loop is not None and ctx.loop.within(loop):
        if ctx.guard is not None or id(ctx) in model.facts.handlers:
            return False
        ctx = ctx.outer
    return True
