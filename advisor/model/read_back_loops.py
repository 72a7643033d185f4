"""Loops that read a result back to the host on every pass: an evaluation script that calls the
model on one batch, then `.cpu().numpy()`s the output to write an image or a metric. Each such
read waits for the GPU to finish all queued work, so the next pass starts with an empty queue:
a non-blocking copy of its batch would have nothing to overlap with. (In a training loop the
read itself is the problem, and a rule reports it; here it is the point of the loop.)"""

from __future__ import annotations

from advisor.model.facts import LoopInfo

# Reads that hand a tensor's values to Python, each waiting for the GPU.
_READS = frozenset({"cpu", "numpy", "item", "tolist"})


def reads_back_each_pass(model, loop: LoopInfo) -> bool:
    """The loop trains nothing, and its own body reads a value back to the host on every pass
    (not under a test of its own)."""
    if model.is_training_loop(loop):
        return False
    outer_guard = loop.ctx.guard
    return any(
        site.method in _READS and not site.node.args and site.ctx.loop is loop and site.ctx.guard is outer_guard
        for site in loop.sites
    )
