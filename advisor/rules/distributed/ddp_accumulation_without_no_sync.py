"""GPU506 `ddp-accumulation-without-no-sync`: gradient accumulation with DDP all-reduces on every micro-batch (no `no_sync()`)."""

from __future__ import annotations
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, Context, FileModel, FunctionInfo, LoopInfo
from advisor.model.guards import guards_of
from advisor.model.names import last_segment
from advisor.model.walk import children
from advisor.rules.base import Report, Rule
from advisor.rules.distributed.ddp_script import DDP, framework_runs_epochs


_STEPPER = re.compile(r"optim|(^|_)opt($|_)|scaler", re.IGNORECASE)


def _modulo_in(model: FileModel, expr: cst.BaseExpression, ctx: Context, depth: int = 0) -> bool:
    """The test computes a `%` itself or through a name bound to one (`is_update = (i + 1) % k == 0`)."""
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo:
            return True
        if type(node) is cst.Name and depth < 2:
            for assignment in model.assignments(node.value, ctx):
                if assignment.value is not None and _modulo_in(model, assignment.value, assignment.ctx, depth + 1):
                    return True
        elif not type(node) is cst.Name:
            stack.extend(children(node))
    return False


class AccumulationWithoutNoSync(Rule):
    code = "GPU506"
    name = "ddp-accumulation-without-no-sync"
    summary = "gradient accumulation with DDP all-reduces on every micro-batch (no `no_sync()`)"
    what = """
        In a file that builds a `DistributedDataParallel` model, a training loop that runs
        `backward()` on every iteration but steps the optimizer only under a periodic test
        (`if (i + 1) % accum == 0`, or a flag computed from one), or steps it once after an
        inner loop of micro-batches, when the file never enters `model.no_sync()` (itself, or
        through a project function used as a `with` item, such as a `ddp_sync(ddp, is_last)`
        context manager in a utilities module) and never sets `require_backward_grad_sync`. Reported at the `backward()` call. FSDP, Accelerate
        (`accelerator.accumulate`), Lightning and the Hugging Face Trainer, which handle
        accumulation themselves, are left alone. When the step's test divides by a setting that
        is 1 unless the run asks otherwise (`--gradient_accumulation_steps` defaulting to 1,
        and no shipped launch script or documented command passing more), the run as shipped
        steps after every backward: that is information.
    """
    why = """
        DDP all-reduces the gradients at the end of every `backward()`. While accumulating, only
        the last micro-batch before the optimizer step needs that exchange: the others pay a
        full gradient all-reduce across every GPU for nothing, which for large models or slow
        interconnects can cost more than the compute itself.
    """
    example = """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    """
    instead = """
        for i, (x, y) in enumerate(loader):
            sync = (i + 1) % accum == 0
            with contextlib.nullcontext() if sync else model.no_sync():
                loss = criterion(model(x), y) / accum
                loss.backward()
            if sync:
                optimizer.step()
                optimizer.zero_grad()
    """
    hint = "run the non-final micro-batches under `with model.no_sync():` so gradients are reduced once per step"
    fix_safety = """
        No automatic fix. `no_sync()` has to wrap the forward and backward of every micro-batch
        but the last one before the step, which means restructuring the loop around the
        accumulation condition.
    """
    references = (
        (
            "Performance Tuning Guide: skip unnecessary all-reduce with DDP and gradient accumulation",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#skip-unnecessary-all-reduce-if-training-with-distributeddataparallel-and-gradient-accumulation",
        ),
        (
            "torch.nn.parallel.DistributedDataParallel.no_sync",
            "https://docs.pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html#torch.nn.parallel.DistributedDataParallel.no_sync",
        ),
    )
    requires = (("backward",), ("DistributedDataParallel",), (".step(",))

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.calls_to(DDP) or framework_runs_epochs(model):
            return
        if model.method_calls("no_sync", "accumulate") or self._enters_no_sync_helper(model):
            return
        if any(target.endswith("require_backward_grad_sync") for _, target in model.facts.assignments):
            return
        steps = [s for s in model.method_calls("step") if self._steps_optimizer(s)]
        if not steps:
            return
        backwards = model.method_calls("backward") + model.calls_to("torch.autograd.backward")
        reported: Set[int] = set()
        for loop in model.facts.loops:
            if not model.is_hot_loop(loop):
                continue
            found = self._periodic_steps(model, loop, steps, backwards) or self._micro_loop(model, loop, steps, backwards)
            if found is None or id(found[0].node) in reported:
                continue
            backward, step = found
            reported.add(id(backward.node))
            if model.guards.every_pass_unless_asked(step.ctx):
                # `--gradient_accumulation_steps` defaults to 1 and no shipped command raises it:
                # the step runs after every backward, and there is nothing to skip.
                yield self.report(
                    backward.node,
                    "with DDP every `backward()` all-reduces the gradients; the optimizer steps at line "
                    "{line[optimizer step]} after every one unless the run asks for accumulation, when the "
                    "micro-batches would pay for an all-reduce they do not need",
                    related=[(step.node, "optimizer step")], severity=Severity.INFO,
                )
                continue
            yield self.report(
                backward.node,
                "with DDP every `backward()` all-reduces the gradients, but the optimizer only steps at "
                "line {line[optimizer step]}: the accumulation micro-batches pay for an all-reduce they do not need",
                related=[(step.node, "optimizer step")],
            )

    def _enters_no_sync_helper(self, model: FileModel) -> bool:
        """A `with` item calls a project function that enters `no_sync()` itself
        (`with ddp_sync(ddp, is_last_round):`, a context manager in a utilities module)."""
        for site in model.facts.calls:
            if site.with_item and any(
                any(inner.method == "no_sync" for inner in info.sites) for _, info in model.calls.targets(site)
            ):
                return True
        return False

    def _steps_optimizer(self, site: CallSite) -> bool:
        last = last_segment(site.receiver_name)
        return bool(last) and "sched" not in last.lower() and bool(_STEPPER.search(last))

    def _helper_sites(self, model: FileModel, loop: LoopInfo, sites: List[CallSite]) -> List[Tuple[CallSite, Context]]:
        """``sites`` directly in the loop body, paired with their context, and those at the top of a
        function the loop body calls, paired with the call's context."""
        out = [(s, s.ctx) for s in sites if s.ctx.loop is loop]
        callees: Dict[str, FunctionInfo] = {}
        for key in loop.callees:
            info = model.resolve(key)
            if info is not None:
                callees[info.key] = info
        for site in sites:
            info = site.ctx.function
            if info is None or site.ctx.loop is not None or info.key not in callees or info is loop.function:
                continue
            for call in model.call_sites(info):
                if call.ctx.loop is loop:
                    ungated = not (site.ctx.gated or site.ctx.gate_test is not None)
                    out.append((site, call.ctx if ungated else site.ctx))
        return out

    def _every_iteration(self, ctx: Context) -> bool:
        return not ctx.gated and ctx.gate_test is None and not ctx.no_grad

    def _periodic(self, model: FileModel, ctx: Context, loop: LoopInfo) -> bool:
        if ctx.gate_test is not None:
            return True
        if not (ctx.gated or ctx.conditional) or ctx.rank_gated:
            return False
        # A `%` test among the step's own guards in this loop (`if (i + 1) % accum == 0:`, or a
        # flag bound to one), not one elsewhere in the loop (`if i % log_every == 0: print(...)`
        # beside a step taken in the `else` of `if scaler is not None:`).
        return any(
            guard.ctx.loop is loop and _modulo_in(model, guard.test, guard.ctx) for guard in guards_of(ctx)
        )

    def _periodic_steps(self, model, loop, steps, backwards) -> Optional[Tuple[CallSite, CallSite]]:
        step_sites = self._helper_sites(model, loop, steps)
        if not step_sites:
            return None
        for backward, ctx in self._helper_sites(model, loop, backwards):
            if not (self._every_iteration(ctx) and self._every_iteration(backward.ctx)):
                continue
            # The steps on the backward's own path: not those in the other arm of an `if` it is
            # under (`if accum > 1: ...periodic step... else: ...step every iteration`).
            arms = {(id(g.test), g.positive) for g in guards_of(ctx)}
            reachable = [
                (step, step_ctx) for step, step_ctx in step_sites
                if not any((id(g.test), not g.positive) in arms for g in guards_of(step_ctx))
            ]
            if reachable and all(self._periodic(model, step_ctx, loop) for _, step_ctx in reachable):
                return backward, reachable[0][0]
        return None

    def _micro_loop(self, model, loop, steps, backwards) -> Optional[Tuple[CallSite, CallSite]]:
        own = [s for s in steps if s.ctx.loop is loop]
        if not own or not loop.own_step:
            return None
        for child in loop.children:
            if child.own_step or any(self._inside(s.ctx.loop, child) for s in steps):
                continue
            for backward in backwards:
                if backward.ctx.loop is child and self._every_iteration(backward.ctx):
                    return backward, own[0]
        return None

    def _inside(self, inner: Optional[LoopInfo], outer: LoopInfo) -> bool:
        while inner is not None:
            if inner is outer:
                return True
            inner = inner.parent
        return False
