"""GPU301 `fp16-autocast-without-grad-scaler`: fp16 autocast in training with no GradScaler."""

from __future__ import annotations
from typing import Iterator, Optional
from advisor.findings import Severity
from advisor.model import FileModel
from advisor.model.facts import AutocastSite
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.vocabulary import LIGHTNING
from advisor.rules.base import Report, Rule
from advisor.rules.precision.dtypes import autocast_device, autocast_dtype


# Frameworks that scale the loss themselves when asked for fp16: used (called), not just imported.
_SCALING_FRAMEWORKS = ("deepspeed", "accelerate", "apex", "colossalai")


class Fp16AutocastWithoutGradScaler(Rule):
    code = "GPU301"
    name = "fp16-autocast-without-grad-scaler"
    summary = "fp16 autocast in training with no GradScaler"
    what = """
        `torch.autocast` (or the older `torch.cuda.amp.autocast`) computing in float16 around
        training code, in a file that never creates a `GradScaler`. CUDA autocast without a
        `dtype` counts as float16, since that is its default. bfloat16 autocast, CPU autocast,
        inference-only autocast, and training driven by Accelerate, DeepSpeed or Lightning
        (which scale the loss themselves) are not reported, nor is a loss handed to a callable
        object of the project that scales it with a GradScaler (`loss_scaler(loss, optimizer)`,
        the scaler built in another module and passed in) or to the `backward(loss)` method of a
        project wrapper that does (OpenNMT's `self.optim.backward(loss)`), nor a loss scaled by a GradScaler the
        caller built and passed in (`grad_scalar.scale(loss).backward()`, whatever its name). An autocast in a module's `forward`, in a file that trains nothing, is left alone when a
        project file importing it builds a GradScaler (`if self.amp: with autocast():`, scaled by
        the training script); a class named as a loss scaler (`NativeScalerWithGradNormCount`)
        that comes from code the analysis cannot read, such as a git submodule not checked out,
        counts as one. A loss handed to a callable passed
        in from outside the project, which nothing shows, is reported as info. A region whose
        backward feeds no optimizer step (a batch-size probe that measures memory, a timed
        forward-backward benchmark, a gradient check: no step in the region, in a loop around
        it, in its function or around the calls of that function) is not training.
    """
    why = """
        float16 stops at about 6e-8: smaller gradient values round to zero. Many gradients of
        a deep network are that small, so without loss scaling parts of the model silently
        stop learning. The run does not fail; it just trains worse. A GradScaler multiplies the
        loss before backward and divides the gradients before the step, skipping steps whose
        gradients overflowed.
    """
    example = """
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    instead = """
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        # or, on GPUs that support it: torch.autocast("cuda", dtype=torch.bfloat16), no scaler
    """
    hint = "add a `torch.amp.GradScaler` (scale, step, update), or autocast to bfloat16 instead"
    fix_safety = """
        No automatic fix. A GradScaler changes three calls of the training step
        (`scaler.scale(loss).backward()`, `scaler.step(optimizer)`, `scaler.update()`) and its
        state belongs in checkpoints; switching to bfloat16 instead depends on the hardware.
        Either choice is the author's.
    """
    references = (
        (
            "Automatic mixed precision: gradient scaling",
            "https://docs.pytorch.org/docs/stable/amp.html#gradient-scaling",
        ),
        ("CUDA automatic mixed precision examples", "https://docs.pytorch.org/docs/stable/notes/amp_examples.html"),
        (
            "torch/amp/autocast_mode.py: without a dtype, CUDA autocast computes in float16",
            "https://github.com/pytorch/pytorch/blob/main/torch/amp/autocast_mode.py",
        ),
    )
    requires = (("autocast",), ("backward", ".step("))

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.facts.autocasts or self._has_scaler(model):
            return
        for site in model.facts.autocasts:
            report = self._check_site(model, site)
            if report is not None:
                yield report

    def _has_scaler(self, model: FileModel) -> bool:
        if model.builds_scaler() or model.uses_framework(*LIGHTNING):
            return True
        if not model.trains_anywhere and model.project is not None and any(
            other.builds_scaler() for other in model.project.importers(model)
        ):
            # The autocast sits in a module's `forward` (`if self.amp: with autocast():`), and
            # the training script that imports the module scales the loss.
            return True
        if any(q.split(".")[0] in _SCALING_FRAMEWORKS for q in model.facts.calls_by_qualname):
            return True
        return any(
            "scaler" in (s.receiver_name or "").lower()
            # `grad_scalar.scale(loss).backward()`, the GradScaler built by the caller and passed in
            or (s.receiver is not None and "scaler" in model.kinds(s.receiver, s.ctx, s.order))
            for s in model.method_calls("scale")
        )

    def _on_backward_path(self, model: FileModel, site: AutocastSite) -> bool:
        """The autocast region produces values that are backpropagated: it wraps a step or a
        training loop, sits in the hot loop, or sits in a function that trains and not in one
        of its evaluation loops."""
        if site.no_grad:
            return False
        if site.body_steps or any(self._steps_through(model, c) for c in site.callees):
            return True
        ctx = site.with_ctx
        if (site.body_trains or model.heat(ctx) is not None) and self._steps_around(model, ctx):
            return True
        if ctx.function is not None and model.trains(ctx.function) and model.steps(ctx.function):
            return ctx.loop is None or model.is_training_loop(ctx.loop)
        return False

    @classmethod
    def _steps_around(cls, model: FileModel, ctx, depth: int = 0) -> bool:
        """Some optimizer steps where the region runs: in a loop around it (itself or through
        a call), in its function, or around the calls of that function (a `loss_step()`
        helper the training loop calls, then steps). A loop that runs backward and steps
        nothing (a timed forward-backward benchmark, a gradient check) leaves no gradient to
        underflow into an update."""
        loop = ctx.loop
        while loop is not None:
            if loop.has_step or loop.loose_step or model.calls_optimizer_step(loop.sites):
                return True
            loop = loop.parent
        function = ctx.function
        if function is None:
            return False
        if model.steps(function):
            return True
        # Two calls up cover a loss helper called by a step helper; the walk stays bounded.
        return depth < 2 and any(
            cls._steps_around(owner, site.ctx, depth + 1) for owner, site in model.callers(function)
        )

    @staticmethod
    def _steps_through(model: FileModel, key: str) -> bool:
        """The function called in the region trains and steps an optimizer (itself or through
        what it calls): a memory profile that runs backward and steps nothing (`autobatch()`
        measuring a batch size) leaves no gradient to underflow into an update."""
        info = model.resolve(key)
        return info is not None and model.trains(info) and model.steps(info)

    def _check_site(self, model: FileModel, site: AutocastSite) -> Optional[Report]:
        call = site.call.node
        enabled = call_argument(call, "enabled", 2 if site.call.qualname == "torch.autocast" else 0)
        if enabled is not None and literal_bool(enabled.value) is False:
            return None
        if site.call.qualname == "torch.cpu.amp.autocast":
            return None
        if not self._on_backward_path(model, site):
            return None
        if site.call.qualname == "torch.autocast":
            device_arg = call_argument(call, "device_type", 0)
            device = autocast_device(device_arg.value) if device_arg is not None else None
            if device == "cpu" or device_arg is None:
                return None
        else:
            device = "cuda"
        dtype_arg = call_argument(call, "dtype", 1)
        dtype = autocast_dtype(model, dtype_arg.value, site) if dtype_arg is not None else ("fp16" if device == "cuda" else None)
        if dtype in ("bf16", "other"):
            return None
        certain = dtype == "fp16" and (device == "cuda" or dtype_arg is not None)
        function = site.with_ctx.function
        handed = model.hands_to_scaler(function, site.call.order) if function is not None else False
        if handed:
            return None  # `loss_scaler(loss, optimizer)`: a loss-scaling object of the project
        if handed is None:
            message = "float16 autocast, and the loss goes to a callable passed in from outside; unless it scales the loss, small gradients underflow"
            return self.report(call, message, severity=Severity.INFO, data={"dtype": None})
        if certain:
            message = "float16 autocast in training without a GradScaler: small gradients underflow to zero"
        elif dtype_arg is not None:
            message = "autocast dtype cannot be resolved here and may be float16; no GradScaler is used"
        else:
            message = "autocast without a dtype computes in float16 on CUDA, and no GradScaler is used"
        return self.report(call, message, severity=None if certain else Severity.INFO,
                           data={"dtype": "float16" if certain else None})
