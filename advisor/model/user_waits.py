"""Loops that wait for a person: each pass shows something and waits for a key, a prompt or a
plot window (`cv2.waitKey`, `input()`, `plt.show()`, a debugger). A loader read in such a loop
hands over a batch per keystroke; how fast its batches load or copy is not what the loop waits
for."""

from __future__ import annotations

from typing import Set

import libcst as cst

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
    sites = [s for s in sites if not _timed(s)]
    # A function of the file that waits on every call (`def show_image(img): ... cv2.waitKey()`)
    # waits for a person wherever it is called.
    for info in {id(s.ctx.function): s.ctx.function for s in sites if _whole_call(model, s)}.values():
        sites += model.call_sites(info)
    for site in sites:
        loop = site.ctx.loop
        while loop is not None and id(loop) not in waiting and _every_pass(model, site, loop):
            waiting.add(id(loop))
            loop = loop.parent
    return waiting


def _timed(site) -> bool:
    """`cv2.waitKey(10)`: a pause of a few milliseconds to draw the window, not a wait for a key."""
    call = site.node
    if (site.qualname or "").rsplit(".", 1)[-1] not in ("waitKey", "waitKeyEx") or not call.args:
        return False
    first = call.args[0].value
    return type(first) is cst.Integer and first.value not in ("0",)


def _whole_call(model, site) -> bool:
    """The wait runs on every call of its function: in no loop and under no test there."""
    ctx = site.ctx
    if ctx.function is None or ctx.loop is not None:
        return False
    while ctx is not None and ctx.function is site.ctx.function:
        if ctx.guard is not None or id(ctx) in model.facts.handlers:
            return False
        ctx = ctx.outer
    return True


def _every_pass(model, site, loop: LoopInfo) -> bool:
    """No `if` or handler between the loop's body and the call: a debugger entered when a file
    exists, every few steps, is no wait on every pass."""
    ctx = site.ctx
    while ctx is not None and ctx.loop is not None and ctx.loop.within(loop):
        if ctx.guard is not None or id(ctx) in model.facts.handlers:
            return False
        ctx = ctx.outer
    return True
