"""GPU403 `empty-cache-in-training-loop`: `torch.cuda.empty_cache()` on every training step."""

from __future__ import annotations
import re
from typing import Iterator, Optional
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, FileModel, Heat
from advisor.model.guards import guards_of
from advisor.model.names import dotted_name
from advisor.model.walk import children
from advisor.rules.base import Report, Rule
from advisor.rules.memory.walks import TRAINING_TEXT


_EMPTY_CACHE = ("torch.cuda.empty_cache", "torch.cuda.memory.empty_cache")


_EVALUATION = re.compile(r"eval|valid", re.IGNORECASE)


def _inside_handler(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Whether ``target`` sits in an `except` clause of the subtree ``root``."""
    stack = [(root, False)]
    while stack:
        node, handled = stack.pop()
        if node is target:
            return handled
        handled = handled or type(node) is cst.ExceptHandler
        stack.extend((child, handled) for child in children(node))
    return False


class EmptyCacheInTrainingLoop(Rule):
    code = "GPU403"
    name = "empty-cache-in-training-loop"
    summary = "`torch.cuda.empty_cache()` on every training step"
    what = """
        `torch.cuda.empty_cache()` inside the innermost training loop, directly or in a
        function that loop calls. Under a periodic condition (every N steps) or another `if`
        the finding is only informational, but not in the branch of a gradient-accumulation
        boundary (`if accumulated >= accum_steps: optimizer.step(); ...`), which every update
        goes through, nor after an early `return` that ends training; in an `except` clause
        (out-of-memory recovery), next to an evaluation pass, or between epochs it is not
        reported.
    """
    why = """
        PyTorch's caching allocator keeps freed GPU memory to hand it out again without asking
        the driver. `empty_cache()` returns all of it, so the next step has to `cudaMalloc`
        its activations again, and releasing and allocating device memory synchronises with
        the GPU. It does not make more memory available to the same process; it only helps
        other processes sharing the GPU.
    """
    example = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            torch.cuda.empty_cache()
    """
    instead = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        # fragmentation from varying shapes: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    """
    hint = "remove it; for fragmentation set `expandable_segments:True` in the allocator config"
    fix_safety = """
        No automatic fix. Removing the call is usually right, but where another process shares
        the GPU, or memory is fragmented by varying shapes, the better change (an allocator
        setting, a call between phases) needs the author's knowledge of the job.
    """
    references = (
        (
            "CUDA semantics: memory management",
            "https://docs.pytorch.org/docs/stable/notes/cuda.html#memory-management",
        ),
        ("torch.cuda.empty_cache", "https://docs.pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html"),
        (
            "huggingface/transformers#31372: `empty_cache` in the training loop slowed training",
            "https://github.com/huggingface/transformers/issues/31372",
        ),
    )
    requires = (("empty_cache",), TRAINING_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.calls_to(*_EMPTY_CACHE):
            heat = model.heat(site.ctx)
            if heat is None or self._in_except(model, site):
                continue
            if heat is Heat.GATED and self._next_to_evaluation(model, site):
                continue
            if heat is Heat.GATED or self._conditional(model, site):
                when, severity = "in the training loop", Severity.INFO
            else:
                when, severity = "on every training step", self.severity
            yield self.report(
                site.node,
                "`empty_cache()` {when} returns cached memory that the next steps must allocate again",
                severity=severity,
                data={"when": when},
            )

    def _conditional(self, model: FileModel, site: CallSite) -> bool:
        """Under an `if` that leaves it to some steps or some runs. Not the branch of an
        accumulation boundary, which every optimizer update goes through (`if accumulated >=
        accum_steps: optimizer.step(); ...; torch.cuda.empty_cache()`), nor what follows an
        early `return` that ends training (`if step >= max_iter: return`)."""
        return any(
            model.guards.gates(g) or (g.positive and not g.exits and not model.guards.step_branch(g))
            for g in guards_of(site.ctx)
        )

    def _in_except(self, model: FileModel, site: CallSite) -> bool:
        root: Optional[cst.CSTNode] = None
        if site.ctx.function is not None:
            root = site.ctx.function.node
        else:
            loop = site.ctx.loop
            while loop is not None:
                root, loop = loop.node, loop.parent
        return root is not None and _inside_handler(root, site.node)

    def _next_to_evaluation(self, model: FileModel, site: CallSite) -> bool:
        block = site.stmt[0]
        for other in model.facts.calls:
            if other.stmt[0] != block or other is site:
                continue
            name = other.method or dotted_name(other.node.func) or ""
            if _EVALUATION.search(name):
                return True
            info = model.resolve(name) if other.method is None else None
            if info is not None and info.no_grad:
                return True
        return False
