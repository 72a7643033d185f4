"""GPU302 `grad-scaler-with-bf16-autocast`: GradScaler in a script whose training autocast is bfloat16."""

from __future__ import annotations
from typing import Iterator, Optional
import libcst as cst
from advisor.findings import Applicability, Fixable
from advisor.model import FileModel
from advisor.model.facts import AutocastSite
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import GRAD_SCALER
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.rules.precision.dtypes import autocast_device, autocast_dtype, spelled_name


def _autocast_trains(model: FileModel, site: AutocastSite) -> bool:
    """The autocast region produces values that are backpropagated (GPU301's test)."""
    if site.no_grad:
        return False
    if site.body_trains or any(model.function_trains(c) for c in site.callees):
        return True
    ctx = site.with_ctx
    if model.heat(ctx) is not None:
        return True
    if ctx.function is not None and model.function_trains(ctx.function.key):
        return ctx.loop is None or model.is_training_loop(ctx.loop)
    return False


def _autocast_precision(model: FileModel, site: AutocastSite) -> Optional[str]:
    """"off" (literally disabled), "fp16", "bf16", "other", or None when it cannot be known."""
    call = site.call.node
    new_api = site.call.qualname == "torch.autocast"
    enabled = call_argument(call, "enabled", 2 if new_api else 0)
    if enabled is not None and literal_bool(enabled.value) is False:
        return "off"
    dtype_arg = call_argument(call, "dtype", 1)
    if dtype_arg is not None:
        return autocast_dtype(model, dtype_arg.value, site)
    if star_kwargs(call):
        return None
    if site.call.qualname == "torch.cpu.amp.autocast":
        return "bf16"
    if not new_api:
        return "fp16"
    device_arg = call_argument(call, "device_type", 0)
    device = autocast_device(device_arg.value) if device_arg is not None else None
    return {"cuda": "fp16", "cpu": "bf16"}.get(device or "")


class GradScalerWithBf16Autocast(Rule):
    code = "GPU302"
    name = "grad-scaler-with-bf16-autocast"
    summary = "GradScaler in a script whose training autocast is bfloat16"
    what = """
        A `GradScaler` created in a file whose training autocast computes in bfloat16
        (`dtype=torch.bfloat16`, also through a constant) and where no autocast runs in
        float16. Reported at the `GradScaler(...)` call. A scaler whose `enabled=` is an
        expression (usually `amp_dtype == torch.float16` or a `use_fp16` flag) or literally
        False is correct and left alone.
    """
    why = """
        bfloat16 has the exponent range of float32, so gradients do not underflow and loss
        scaling changes nothing. The scaler still costs: `scaler.step` checks every gradient
        for inf/NaN and reads the result on the host, one synchronisation per step, and
        `unscale_` adds kernels over all gradients. Lightning refuses the combination outright.
    """
    example = """
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    """
    instead = """
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        # or keep one code path for both dtypes:
        # scaler = torch.amp.GradScaler("cuda", enabled=(amp_dtype == torch.float16))
    """
    hint = "drop the scaler for bf16, or create it with `enabled=(amp_dtype == torch.float16)`"
    fixable = Fixable.UNSAFE
    fix_safety = """
        The fix disables the scaler (`enabled=False`); every `scaler.scale`, `step` and `update`
        call still works and passes through. Always offered as unsafe:

        - a disabled scaler no longer skips optimizer steps whose gradients hold inf or NaN;
        - its `state_dict()` becomes empty, so checkpoints change, and loading such a checkpoint
          into an enabled scaler later fails.
    """
    references = (
        (
            "Automatic mixed precision: gradient scaling",
            "https://docs.pytorch.org/docs/stable/amp.html#gradient-scaling",
        ),
        (
            "torch/amp/grad_scaler.py: `step` reads the inf check on the host",
            "https://github.com/pytorch/pytorch/blob/main/torch/amp/grad_scaler.py",
        ),
        ("torch.autocast", "https://docs.pytorch.org/docs/stable/amp.html#torch.autocast"),
    )
    requires = (("GradScaler",), ("bfloat16",), ("autocast",))

    def check(self, model: FileModel) -> Iterator[Report]:
        scalers = model.calls_to(GRAD_SCALER)
        if not scalers or not model.facts.autocasts:
            return
        training: Optional[AutocastSite] = None
        for site in model.facts.autocasts:
            precision = _autocast_precision(model, site)
            if precision == "off":
                continue
            if precision != "bf16":
                return  # a float16 (or unknown) autocast may be what the scaler is for
            if training is None and _autocast_trains(model, site):
                training = site
        if training is None:
            return
        for site in scalers:
            call = site.node
            if star_kwargs(call):
                continue
            spelled = spelled_name(model, call.func) or ""
            enabled = call_argument(call, "enabled", 4 if spelled.startswith("torch.cuda.amp") else 5)
            if enabled is not None and literal_bool(enabled.value) is not True:
                continue  # enabled by an expression (usually the dtype), or already off
            yield self.report(
                call,
                "GradScaler with bfloat16 autocast (line {line[bfloat16 autocast]}): bf16 needs no loss scaling, "
                "and `scaler.step` reads an inf check on the host every step",
                fix=self._fix(model, call, enabled),
                related=[(training.call.node, "bfloat16 autocast")],
            )

    def _fix(self, model: FileModel, call: cst.Call, enabled: Optional[cst.Arg]) -> FixSpec:
        # A disabled scaler passes scale/unscale_/step/update straight through, so every call
        # site stays valid. Unsafe all the same: it no longer skips steps whose gradients hold
        # inf/NaN, and its state_dict() becomes empty, which changes saved checkpoints.
        if enabled is not None:
            edit = NodeEdit(enabled.value, "False")
        elif call.args:
            edit = NodeEdit(call.args[-1].value, ", enabled=False", "after")
        else:
            edit = NodeEdit(call, f"{model.code(call.func)}(enabled=False)")
        return FixSpec("disable the scaler (`enabled=False`)", (edit,), Applicability.UNSAFE)
