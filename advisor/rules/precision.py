"""Mixed precision (GPU3xx)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

import libcst as cst

from advisor.findings import Applicability, Severity
from advisor.model import CallSite, Context, FileModel
from advisor.model.facts import MODULE_SCOPE, AutocastSite
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import GRAD_SCALER, dotted_name
from advisor.model.walk import children
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule

# Frameworks that scale the loss themselves when asked for fp16: used (called), not just imported.
_SCALING_FRAMEWORKS = ("deepspeed", "accelerate", "apex", "colossalai")
_LIGHTNING = ("lightning", "pytorch_lightning")


def _dtype(model: FileModel, expr: cst.BaseExpression, site: AutocastSite, depth: int = 0) -> Optional[str]:
    """"fp16", "bf16", "other" or None when the value cannot be known statically."""
    qual = model.imports.qualify(expr)
    if qual in ("torch.float16",):
        return "fp16"
    if qual == "torch.bfloat16":
        return "bf16"
    if qual is not None and qual.startswith("torch."):
        return "other"
    name = dotted_name(expr)
    if name is None or depth > 3:
        return None
    found = model.assignments(name, site.call.ctx)
    kinds = {_dtype(model, a.value, site, depth + 1) if a.value is not None else None for a in found}
    return kinds.pop() if len(kinds) == 1 else None


def _device(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        if isinstance(value, str):
            return value.split(":")[0]
    return None


class Fp16AutocastWithoutGradScaler(Rule):
    code = "GPU301"
    name = "fp16-autocast-without-grad-scaler"
    summary = "fp16 autocast in training with no GradScaler"
    what = """
        `torch.autocast` (or the older `torch.cuda.amp.autocast`) computing in float16 around
        training code, in a file that never creates a `GradScaler`. CUDA autocast without a
        `dtype` counts as float16, since that is its default. bfloat16 autocast, CPU autocast,
        inference-only autocast, and training driven by Accelerate, DeepSpeed or Lightning
        (which scale the loss themselves) are not reported.
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
    requires = (("autocast",), ("backward", ".step("))

    VALID = [
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="scaler present",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="bf16",
        ),
        Case(
            """
            import torch
            @torch.no_grad()
            def predict(model, loader):
                for x in loader:
                    with torch.autocast("cuda"):
                        yield model(x)
            """,
            note="inference only",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                with torch.autocast("cpu"):
                    loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="CPU autocast is bf16",
        ),
        Case(
            """
            from torch.cuda.amp import autocast, GradScaler
            def train(model, loader, optimizer, scaler: GradScaler):
                for x, y in loader:
                    with autocast():
                        loss = model(x, y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
            """,
            note="scaler passed in",
        ),
        Case(
            """
            import torch
            from accelerate import Accelerator
            accelerator = Accelerator(mixed_precision="fp16")
            for batch in loader:
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
            """,
            note="Accelerate scales the loss",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.float16, enabled=False):
                    loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="disabled",
        ),
        Case(
            """
            import torch
            for epoch in range(10):
                for x, y in train_loader:
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                for x, y in val_loader:
                    with torch.autocast("cuda", dtype=torch.float16):
                        val_loss = criterion(model(x), y)
            """,
            note="fp16 only for validation",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
                    loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """
        ),
        Case(
            """
            import torch
            for x, y in loader:
                with torch.autocast(device_type="cuda"):  # expect: GPU301
                    loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="default CUDA dtype is fp16",
        ),
        Case(
            """
            from torch.cuda.amp import autocast
            def train_step(model, batch, opt):
                with autocast():  # expect: GPU301
                    loss = model(batch).mean()
                loss.backward()
                opt.step()
            """,
            note="deprecated API, helper",
        ),
        Case(
            """
            import torch
            AMP_DTYPE = torch.half
            for x, y in loader:
                with torch.amp.autocast("cuda", dtype=AMP_DTYPE):  # expect: GPU301
                    loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="dtype through a constant",
        ),
        Case(
            """
            import torch
            for x, y in loader:
                with torch.autocast(device_type=device.type):  # expect: GPU301 info
                    loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="device unknown",
        ),
        Case(
            """
            import torch as th
            class Trainer:
                def step(self, batch):
                    with th.autocast("cuda", dtype=th.float16), th.no_grad():
                        target = self.teacher(batch)
                    with th.autocast("cuda", dtype=th.float16):  # expect: GPU301
                        loss = self.loss_fn(self.model(batch), target)
                    loss.backward()
                    self.optimizer.step()
            """,
            note="methods; the no_grad teacher pass is not on the backward path",
        ),
        Case(
            """
            import torch
            if __name__ == "__main__":
                with torch.autocast("cuda", dtype=torch.float16):  # expect: GPU301
                    for x, y in loader:
                        loss = criterion(model(x), y)
                        loss.backward()
                        optimizer.step()
            """,
            note="autocast around the whole loop",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.facts.autocasts or self._has_scaler(model):
            return
        for site in model.facts.autocasts:
            report = self._check_site(model, site)
            if report is not None:
                yield report

    def _has_scaler(self, model: FileModel) -> bool:
        if model.calls_to(GRAD_SCALER) or model.uses_framework(*_LIGHTNING):
            return True
        if any(q.split(".")[0] in _SCALING_FRAMEWORKS for q in model.facts.calls_by_qualname):
            return True
        return any("scaler" in (s.receiver_name or "").lower() for s in model.method_calls("scale"))

    def _on_backward_path(self, model: FileModel, site: AutocastSite) -> bool:
        """The autocast region produces values that are backpropagated: it wraps a step or a
        training loop, sits in the hot loop, or sits in a function that trains and not in one
        of its evaluation loops."""
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
            device = _device(device_arg.value) if device_arg is not None else None
            if device == "cpu" or device_arg is None:
                return None
        else:
            device = "cuda"
        dtype_arg = call_argument(call, "dtype", 1)
        dtype = _dtype(model, dtype_arg.value, site) if dtype_arg is not None else ("fp16" if device == "cuda" else None)
        if dtype in ("bf16", "other"):
            return None
        certain = dtype == "fp16" and (device == "cuda" or dtype_arg is not None)
        if certain:
            message = "float16 autocast in training without a GradScaler: small gradients underflow to zero"
        elif dtype_arg is not None:
            message = "autocast dtype cannot be resolved here and may be float16; no GradScaler is used"
        else:
            message = "autocast without a dtype computes in float16 on CUDA, and no GradScaler is used"
        return self.report(call, message, severity=None if certain else Severity.INFO)


# -- helpers shared by GPU302-GPU305 ---------------------------------------------------------

# The deprecated device-specific AMP entry points, as spelled in the import (the canonical
# names merge `torch.cuda.amp.GradScaler` into `torch.amp.GradScaler`), with what replaces them.
_DEPRECATED_AMP = {
    "torch.cuda.amp.autocast": ("autocast", "cuda"),
    "torch.cuda.amp.autocast_mode.autocast": ("autocast", "cuda"),
    "torch.cpu.amp.autocast": ("autocast", "cpu"),
    "torch.cpu.amp.autocast_mode.autocast": ("autocast", "cpu"),
    "torch.cuda.amp.GradScaler": ("GradScaler", "cuda"),
    "torch.cuda.amp.grad_scaler.GradScaler": ("GradScaler", "cuda"),
}
# Positional parameters of the old `torch.{cuda,cpu}.amp.autocast`; the new one takes the device first.
_OLD_AUTOCAST_PARAMS = ("enabled", "dtype", "cache_enabled")
_LOW_PRECISION = {"torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32", "torch.float64": "fp64"}
_CAST_METHODS = {"half": "fp16", "bfloat16": "bf16", "float": "fp32", "double": "fp64"}


def _spelled_name(model: FileModel, func: cst.BaseExpression) -> Optional[str]:
    """The imported name as written (`torch.cuda.amp.GradScaler`), before canonical merging."""
    dotted = dotted_name(func)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    target = model.imports.aliases.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def _torch_alias(model: FileModel, func: Optional[cst.BaseExpression] = None) -> Optional[str]:
    """A local name bound to the `torch` package itself: the head of ``func`` when it is one,
    else `torch`, else any alias (`import torch as th`)."""
    aliases = model.imports.aliases
    if func is not None:
        dotted = dotted_name(func)
        head = dotted.partition(".")[0] if dotted else None
        if head is not None and aliases.get(head) == "torch":
            return head
    if aliases.get("torch") == "torch":
        return "torch"
    return next((name for name, target in aliases.items() if target == "torch"), None)


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
        return _dtype(model, dtype_arg.value, site)
    if star_kwargs(call):
        return None
    if site.call.qualname == "torch.cpu.amp.autocast":
        return "bf16"
    if not new_api:
        return "fp16"
    device_arg = call_argument(call, "device_type", 0)
    device = _device(device_arg.value) if device_arg is not None else None
    return {"cuda": "fp16", "cpu": "bf16"}.get(device or "")


def _dtype_of(model: FileModel, expr: cst.BaseExpression) -> Optional[str]:
    """A torch dtype, also through a module-level constant (`DTYPE = torch.float16`)."""
    kind = _LOW_PRECISION.get(model.imports.qualify(expr) or "")
    if kind is None and isinstance(expr, cst.Name):
        found = model.facts.assignments.get((MODULE_SCOPE, expr.value), ())
        kinds = {
            _LOW_PRECISION.get(model.imports.qualify(a.value) or "") if a.value is not None else None for a in found
        }
        if len(kinds) == 1:
            kind = kinds.pop()
    return kind


def _cast_kind(model: FileModel, call: cst.Call) -> Optional[str]:
    """What a `.half()`, `.bfloat16()`, `.float()` or `.to(dtype)` call casts to (None: not a cast)."""
    if not isinstance(call.func, cst.Attribute):
        return None
    method = call.func.attr.value
    if method in _CAST_METHODS:
        return None if call.args else _CAST_METHODS[method]
    if method not in ("to", "type"):
        return None
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "dtype":
            kind = _dtype_of(model, arg.value)
            if kind is not None:
                return kind
            if arg.keyword is not None:
                return "unknown"
    return None


def _chain_cast(model: FileModel, expr: Optional[cst.BaseExpression]) -> Optional[Tuple[str, cst.Call]]:
    """The last cast applied in a method chain such as `Net().to(device).half()`."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        kind = _cast_kind(model, expr)
        if kind is not None:
            return kind, expr
        expr = expr.func.value
    return None


def _chain_base(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """`model` for `model.to(device).half()`: the dotted name a method chain starts from."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        expr = expr.func.value
    return dotted_name(expr) if expr is not None else None


def _small_calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    """Calls inside one small subtree (an argument, an assignment value): never a whole file."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            yield current
        if not isinstance(current, cst.Lambda):
            stack.extend(children(current))


def _mentions_attribute(node: cst.CSTNode, attr: str) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute) and current.attr.value == attr:
            return True
        stack.extend(children(current))
    return False


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
    fixable = "unsafe"
    requires = (("GradScaler",), ("bfloat16",), ("autocast",))

    VALID = [
        Case(
            """
            import torch
            amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
            scaler = torch.amp.GradScaler("cuda", enabled=(amp_dtype == torch.float16))
            for x, y in loader:
                with torch.autocast("cuda", dtype=amp_dtype):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="enabled only for fp16",
        ),
        Case(
            """
            import torch
            from torch.cuda.amp import GradScaler
            use_fp16 = args.precision == "fp16"
            scaler = GradScaler(enabled=use_fp16)
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="enabled by a flag",
        ),
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()

            @torch.no_grad()
            def export_logits(model, x):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    return model(x)
            """,
            note="fp16 training, bf16 only for inference",
        ),
        Case(
            """
            import torch
            AMP = {"fp16": torch.float16, "bf16": torch.bfloat16}
            dtype = AMP[cfg.precision]
            scaler = torch.cuda.amp.GradScaler()
            for batch in loader:
                with torch.autocast(device_type="cuda", dtype=dtype):
                    loss = model(**batch).loss
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="dtype chosen from a config table",
        ),
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda", enabled=False)
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="already disabled",
        ),
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")

            def train_step(x, y):
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()

            def finetune_step(x, y):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="the scaler serves the fp16 path",
        ),
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda", **scaler_kwargs)
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="arguments from a kwargs dict",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")  # expect: GPU302
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            fixed="""
            import torch
            scaler = torch.amp.GradScaler("cuda", enabled=False)  # expect: GPU302
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
        ),
        Case(
            """
            import torch
            AMP_DTYPE = torch.bfloat16

            def train(model, loader, optimizer):
                scaler = torch.cuda.amp.GradScaler()  # expect: GPU302
                for batch in loader:
                    with torch.autocast(device_type="cuda", dtype=AMP_DTYPE):
                        loss = model(**batch).loss
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
            """,
            fixed="""
            import torch
            AMP_DTYPE = torch.bfloat16

            def train(model, loader, optimizer):
                scaler = torch.cuda.amp.GradScaler(enabled=False)  # expect: GPU302
                for batch in loader:
                    with torch.autocast(device_type="cuda", dtype=AMP_DTYPE):
                        loss = model(**batch).loss
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
            """,
            note="dtype through a module constant",
        ),
        Case(
            """
            from torch.cuda.amp import GradScaler, autocast
            import torch

            class Trainer:
                def __init__(self, model, optimizer):
                    self.model, self.optimizer = model, optimizer
                    self.scaler = GradScaler(init_scale=2.0**16, enabled=True)  # expect: GPU302

                def step(self, batch):
                    with autocast(dtype=torch.bfloat16):
                        loss = self.model(batch).mean()
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
            """,
            fixed="""
            from torch.cuda.amp import GradScaler, autocast
            import torch

            class Trainer:
                def __init__(self, model, optimizer):
                    self.model, self.optimizer = model, optimizer
                    self.scaler = GradScaler(init_scale=2.0**16, enabled=False)  # expect: GPU302

                def step(self, batch):
                    with autocast(dtype=torch.bfloat16):
                        loss = self.model(batch).mean()
                    self.scaler.scale(loss).backward()
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
            """,
            note="deprecated spellings, literal enabled=True",
        ),
        Case(
            """
            import torch as th
            scaler = th.GradScaler()  # expect: GPU302
            for step, (x, y) in enumerate(loader):
                with th.autocast("cuda", th.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                th.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            """,
            fixed="""
            import torch as th
            scaler = th.GradScaler(enabled=False)  # expect: GPU302
            for step, (x, y) in enumerate(loader):
                with th.autocast("cuda", th.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                th.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            """,
            note="aliased torch, positional dtype",
        ),
        Case(
            """
            import torch

            def train_one_epoch(model, loader, optimizer, scaler):
                for x, y in loader:
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        loss = torch.nn.functional.cross_entropy(model(x), y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()

            def main():
                scaler = torch.amp.GradScaler(  # expect: GPU302
                    "cuda",
                    growth_interval=1000,
                )
                for epoch in range(10):
                    train_one_epoch(model, loader, optimizer, scaler)
            """,
            fixed="""
            import torch

            def train_one_epoch(model, loader, optimizer, scaler):
                for x, y in loader:
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        loss = torch.nn.functional.cross_entropy(model(x), y)
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()

            def main():
                scaler = torch.amp.GradScaler(  # expect: GPU302
                    "cuda",
                    growth_interval=1000, enabled=False,
                )
                for epoch in range(10):
                    train_one_epoch(model, loader, optimizer, scaler)
            """,
            note="scaler passed to the training function",
        ),
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")  # expect: GPU302
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=False):
                baseline = evaluate(model)
            model.train()
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            fixed="""
            import torch
            scaler = torch.amp.GradScaler("cuda", enabled=False)  # expect: GPU302
            model.eval()
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=False):
                baseline = evaluate(model)
            model.train()
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x), y)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            """,
            note="a disabled autocast elsewhere does not count",
        ),
    ]

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
            spelled = _spelled_name(model, call.func) or ""
            enabled = call_argument(call, "enabled", 4 if spelled.startswith("torch.cuda.amp") else 5)
            if enabled is not None and literal_bool(enabled.value) is not True:
                continue  # enabled by an expression (usually the dtype), or already off
            yield Report(
                self,
                call,
                "GradScaler with bfloat16 autocast (line {line}): bf16 needs no loss scaling, and "
                "`scaler.step` reads an inf check on the host every step",
                self.severity,
                self._fix(model, call, enabled),
                related=training.call.node,
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


class DeprecatedAmpApi(Rule):
    code = "GPU303"
    name = "deprecated-amp-api"
    summary = "`torch.cuda.amp` / `torch.cpu.amp` autocast or GradScaler (deprecated)"
    what = """
        Calls to `torch.cuda.amp.autocast(...)`, `torch.cuda.amp.GradScaler(...)` and
        `torch.cpu.amp.autocast(...)`, however they were imported (`from torch.cuda.amp import
        autocast`, `import torch.cuda.amp as amp`). The fix rewrites them to
        `torch.amp.autocast("cuda", ...)`, `torch.amp.GradScaler("cuda", ...)` and
        `torch.amp.autocast("cpu", ...)`, keeping every argument (positional `enabled`, `dtype`
        and `cache_enabled` become keywords, since the new autocast takes the device first). It
        is offered when the configured minimum torch version is 2.3 or later, and for a name
        imported on its own only when `torch` itself is imported too.
    """
    why = """
        Since torch 2.4 the device-specific entry points emit a FutureWarning on every call
        site: they are thin wrappers kept for compatibility and are on their way out. Nothing
        is slower; the warning is noise in every log, and the code will break when the
        wrappers go.
    """
    example = """
        from torch.cuda.amp import GradScaler, autocast
        scaler = GradScaler()
        with autocast(dtype=torch.float16):
            loss = criterion(model(x), y)
    """
    instead = """
        scaler = torch.amp.GradScaler("cuda")
        with torch.amp.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
    """
    hint = 'use `torch.amp.autocast("cuda", ...)` and `torch.amp.GradScaler("cuda", ...)`'
    fixable = "safe (when torch-version is 2.3 or later)"
    requires = (("amp",), ("cuda", "cpu"))

    VALID = [
        Case(
            """
            import torch
            scaler = torch.amp.GradScaler("cuda")
            with torch.amp.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
            """,
            note="the new API",
        ),
        Case(
            """
            import torch
            scaler = torch.GradScaler()
            with torch.autocast(device_type="cuda"):
                loss = criterion(model(x), y)
            """,
            note="top-level spellings",
        ),
        Case(
            """
            from torch.amp import GradScaler, autocast
            scaler = GradScaler("cuda")
            with autocast("cuda", dtype=torch.bfloat16):
                out = model(x)
            """,
            note="imported from torch.amp",
        ),
        Case(
            """
            from torch.cuda.amp import GradScaler

            def train(model, scaler: GradScaler):
                assert isinstance(scaler, GradScaler)
                return model
            """,
            note="type annotations and isinstance are not calls",
        ),
        Case(
            """
            from accelerate import Accelerator
            accelerator = Accelerator(mixed_precision="fp16")
            with accelerator.autocast():
                loss = model(batch).loss
            """,
            note="Accelerate's own autocast",
        ),
        Case(
            """
            import apex.amp as amp
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            """,
            note="apex amp is a different package",
        ),
        Case(
            """
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                out = model(x)
            """,
            note="device chosen at run time",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            scaler = torch.cuda.amp.GradScaler()  # expect: GPU303
            with torch.cuda.amp.autocast():  # expect: GPU303
                loss = criterion(model(x), y)
            """,
            fixed="""
            import torch
            scaler = torch.amp.GradScaler("cuda")  # expect: GPU303
            with torch.amp.autocast("cuda"):  # expect: GPU303
                loss = criterion(model(x), y)
            """,
        ),
        Case(
            """
            import torch
            from torch.cuda.amp import GradScaler, autocast
            scaler = GradScaler(init_scale=1024, growth_interval=100)  # expect: GPU303
            for x, y in loader:
                with autocast(True, torch.float16, cache_enabled=False):  # expect: GPU303
                    loss = criterion(model(x), y)
            """,
            fixed="""
            import torch
            from torch.cuda.amp import GradScaler, autocast
            scaler = torch.amp.GradScaler("cuda", init_scale=1024, growth_interval=100)  # expect: GPU303
            for x, y in loader:
                with torch.amp.autocast("cuda", enabled=True, dtype=torch.float16, cache_enabled=False):  # expect: GPU303
                    loss = criterion(model(x), y)
            """,
            note="names imported; positional arguments become keywords",
        ),
        Case(
            """
            import torch as th
            import torch.cuda.amp as amp

            @amp.autocast(dtype=th.bfloat16)  # expect: GPU303
            def forward(model, x):
                return model(x)

            scaler = amp.GradScaler(65536.0)  # expect: GPU303
            """,
            fixed="""
            import torch as th
            import torch.cuda.amp as amp

            @th.amp.autocast("cuda", dtype=th.bfloat16)  # expect: GPU303
            def forward(model, x):
                return model(x)

            scaler = th.amp.GradScaler("cuda", 65536.0)  # expect: GPU303
            """,
            note="module alias, decorator, positional init_scale",
        ),
        Case(
            """
            import torch
            with torch.cpu.amp.autocast(dtype=torch.bfloat16):  # expect: GPU303
                out = model(features)
            """,
            fixed="""
            import torch
            with torch.amp.autocast("cpu", dtype=torch.bfloat16):  # expect: GPU303
                out = model(features)
            """,
            note="CPU autocast",
        ),
        Case(
            """
            from torch.cuda.amp import autocast

            def train_step(model, batch, opt):
                with autocast():  # expect: GPU303
                    loss = model(batch).mean()
                loss.backward()
                opt.step()
            """,
            note="no `torch` name to write the new call with: reported without a fix",
        ),
        Case(
            """
            import torch
            from torch.cuda import amp
            class Trainer:
                def __init__(self, cfg):
                    self.scaler = amp.GradScaler(enabled=cfg.fp16)  # expect: GPU303

                def step(self, batch):
                    with amp.autocast(enabled=self.cfg.fp16):  # expect: GPU303
                        return self.model(batch)
            """,
            fixed="""
            import torch
            from torch.cuda import amp
            class Trainer:
                def __init__(self, cfg):
                    self.scaler = torch.amp.GradScaler("cuda", enabled=cfg.fp16)  # expect: GPU303

                def step(self, batch):
                    with torch.amp.autocast("cuda", enabled=self.cfg.fp16):  # expect: GPU303
                        return self.model(batch)
            """,
            note="`from torch.cuda import amp`",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        sites = model.calls_to("torch.cuda.amp.autocast", "torch.cpu.amp.autocast", GRAD_SCALER)
        for site in sites:
            spelled = _spelled_name(model, site.node.func)
            entry = _DEPRECATED_AMP.get(spelled or "")
            if entry is None:
                continue
            kind, device = entry
            replacement = f'torch.amp.{kind}("{device}", ...)'
            shown = spelled.replace(".autocast_mode", "").replace(".grad_scaler", "")
            message = f"`{shown}` is deprecated; use `{replacement}`"
            severity = None
            if model.torch_version < (2, 3):
                if kind == "GradScaler":
                    severity = Severity.INFO  # no replacement before torch 2.3
                    message += " once the project requires torch 2.3"
                else:
                    message = f'`{shown}` is deprecated; `torch.autocast("{device}", ...)` replaces it'
            yield self.report(site.node, message, severity=severity, fix=self._fix(model, site, kind, device))

    def _fix(self, model: FileModel, site: CallSite, kind: str, device: str) -> Optional[FixSpec]:
        if model.torch_version < (2, 3):
            return None
        call = site.node
        torch_name = _torch_alias(model, call.func)
        if torch_name is None:
            return None
        new_func = f"{torch_name}.amp.{kind}"
        message = f'use `torch.amp.{kind}("{device}", ...)`'
        if not call.args:
            return FixSpec(message, (NodeEdit(call, f'{new_func}("{device}")'),))
        edits = [NodeEdit(call.func, new_func)]
        positional = 0
        for i, arg in enumerate(call.args):
            prefix = f'"{device}", ' if i == 0 else ""
            if kind == "autocast" and arg.keyword is None:
                if arg.star or positional >= len(_OLD_AUTOCAST_PARAMS):
                    return None  # cannot name what `*args` holds
                edits.append(NodeEdit(arg.value, f"{prefix}{_OLD_AUTOCAST_PARAMS[positional]}=", "before"))
                positional += 1
            elif prefix:
                # GradScaler's old positional parameters follow the new `device` unchanged.
                edits.append(NodeEdit(arg, prefix, "before"))
        return FixSpec(message, tuple(edits))


# Packages that keep fp32 master weights (or train adapters on a frozen low-precision base).
_MASTER_WEIGHT_PACKAGES = ("deepspeed", "apex", "peft", "bitsandbytes", "colossalai", "optimi")


def _optimizer_class(qualname: str) -> bool:
    last = qualname.rsplit(".", 1)[-1]
    return (
        qualname.startswith("torch.optim.")
        and "lr_scheduler" not in qualname
        and "swa_utils" not in qualname
        and last[:1].isupper()
    )


class LowPrecisionMasterWeights(Rule):
    code = "GPU304"
    name = "low-precision-master-weights"
    summary = "model cast to fp16/bf16 and trained by a plain `torch.optim` optimizer"
    what = """
        A model cast with `.half()`, `.bfloat16()` or `.to(torch.float16)` (directly, or at the
        end of a chain such as `Net().cuda().half()`) before a `torch.optim` optimizer is built
        from its `parameters()`, in a file that trains. Not reported when the file uses
        autocast, when the model is cast back with `.float()` first, when its base is frozen
        (`requires_grad_(False)`, a `requires_grad` filter) for adapters, or when DeepSpeed,
        apex, PEFT or bitsandbytes manage the weights.
    """
    why = """
        The optimizer then keeps the weights themselves in 16 bits. An update smaller than half
        the spacing between neighbouring 16-bit values rounds away: in float16 `1 + 1e-4 == 1`,
        in bfloat16 even `1 + 1e-3 == 1`. With ordinary learning rates most small updates
        vanish, so training stalls or drifts without any error. Mixed precision keeps float32
        master weights and only computes in 16 bits.
    """
    example = """
        model = Net().cuda().half()
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
        for x, y in loader:
            loss = criterion(model(x.half()), y)
            loss.backward()
            optimizer.step()
    """
    instead = """
        model = Net().cuda()  # float32 weights
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    hint = "keep float32 parameters and compute in 16 bits with `torch.autocast`"
    requires = (("half", "bfloat16", "float16"), ("optim",), ("backward", ".step("))

    VALID = [
        Case(
            """
            import torch
            model = Net().cuda()
            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x.half()), y)
                loss.backward()
                optimizer.step()
            """,
            note="autocast instead of a cast; inputs cast, not the model",
        ),
        Case(
            """
            import torch
            model = load_model(args.ckpt).cuda().half().eval()

            @torch.inference_mode()
            def predict(batch):
                return model(batch.half()).argmax(-1)

            for batch in loader:
                preds.append(predict(batch))
            """,
            note="inference script",
        ),
        Case(
            """
            import torch
            base = AutoModel.from_pretrained(name).cuda().half()
            base.requires_grad_(False)
            adapter = Adapter(base.config.hidden_size).cuda()
            optimizer = torch.optim.AdamW(adapter.parameters(), lr=1e-3)
            for batch in loader:
                loss = adapter(base(**batch).last_hidden_state).mean()
                loss.backward()
                optimizer.step()
            """,
            note="frozen half base, fp32 adapter trained",
        ),
        Case(
            """
            import torch
            model = Net().half()
            model.requires_grad_(False)
            for layer in model.head:
                layer.requires_grad_(True)
            optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="frozen base with a requires_grad filter",
        ),
        Case(
            """
            import torch
            model = Net().cuda().half()
            model.load_state_dict(torch.load("fp16_weights.pt"))
            model.float()
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="cast back to float32 before the optimizer",
        ),
        Case(
            """
            import torch
            import deepspeed
            model = Net().half()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config="ds.json")
            for batch in loader:
                loss = engine(batch)
                engine.backward(loss)
                engine.step()
            """,
            note="DeepSpeed keeps fp32 master weights",
        ),
        Case(
            """
            import torch
            teacher = Teacher().cuda().half().eval()
            student = Student().cuda()
            optimizer = torch.optim.AdamW(student.parameters(), lr=1e-3)
            for x, y in loader:
                with torch.no_grad():
                    target = teacher(x.half()).float()
                loss = kd_loss(student(x), target)
                loss.backward()
                optimizer.step()
            """,
            note="half teacher, fp32 student trained",
        ),
        Case(
            """
            import torch
            model = Net().cuda()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            ema = copy.deepcopy(model).half()
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="a half copy for EMA, cast after the optimizer and not trained",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            model = Net().cuda().half()  # expect: GPU304
            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
            for x, y in loader:
                loss = criterion(model(x.half()), y)
                loss.backward()
                optimizer.step()
            """
        ),
        Case(
            """
            import torch
            from torch import optim

            def main(args):
                model = build_model(args)
                model.to(args.device)
                model.bfloat16()  # expect: GPU304
                opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
                for epoch in range(args.epochs):
                    for x, y in train_loader:
                        opt.zero_grad()
                        criterion(model(x), y).backward()
                        opt.step()
            """,
            note="in-place cast statement, `from torch import optim`",
        ),
        Case(
            """
            import torch
            model = Transformer(cfg)
            model = model.to("cuda", dtype=torch.bfloat16)  # expect: GPU304
            param_groups = [
                {"params": model.parameters(), "weight_decay": 0.1},
            ]
            optimizer = torch.optim.AdamW(param_groups, lr=6e-4)
            for batch in loader:
                loss = model(batch).loss
                loss.backward()
                optimizer.step()
            """,
            note=".to(dtype=...) and param groups through a name",
        ),
        Case(
            """
            import torch
            DTYPE = torch.float16
            net = UNet().cuda().to(DTYPE)  # expect: GPU304
            if args.resume:
                net.load_state_dict(torch.load(args.resume))
            optimizer = torch.optim.Adam(net.parameters())
            for img, mask in loader:
                loss = dice_loss(net(img.to(DTYPE)), mask)
                loss.backward()
                optimizer.step()
            """,
            note="dtype through a module constant",
        ),
        Case(
            """
            import torch

            class Trainer:
                def __init__(self, model, lr):
                    self.model = model.cuda().half()  # expect: GPU304
                    self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

                def fit(self, loader):
                    for batch in loader:
                        loss = self.model(batch).mean()
                        loss.backward()
                        self.optimizer.step()
                        self.optimizer.zero_grad()
            """,
            note="attribute of a trainer class",
        ),
        Case(
            """
            import torch
            model = Net().cuda()
            if args.fp16:
                model.half()  # expect: GPU304 info
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="conditional cast is info",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if model.facts.autocasts or model.uses_framework(*_MASTER_WEIGHT_PACKAGES):
            return
        if not model.trains_anywhere:
            return
        if self._freezes_parameters(model):
            return  # a frozen base with adapters or a head: what is trained is not known here
        frozen = [
            s.receiver_name
            for s in model.method_calls("requires_grad_")
            if s.receiver_name and s.node.args and literal_bool(s.node.args[0].value) is False
        ]
        for qualname, sites in model.facts.calls_by_qualname.items():
            if not _optimizer_class(qualname):
                continue
            for site in sites:
                if site.outer is not None:
                    continue  # wrapped (a master-weight optimizer, accelerator.prepare, ...)
                for name in self._trained_models(model, site):
                    if any(r == name or r.startswith(name + ".") for r in frozen):
                        continue
                    found = self._last_cast(model, name, site)
                    if found is None or found[0] not in ("fp16", "bf16"):
                        continue
                    kind, node, ctx = found
                    dtype = "float16" if kind == "fp16" else "bfloat16"
                    yield Report(
                        self,
                        node,
                        f"`{name}` is cast to {dtype} and its parameters are trained by "
                        f"`{qualname.rsplit('.', 1)[-1]}` (line {{line}}): updates below half a 16-bit "
                        "step round away",
                        Severity.INFO if ctx is not site.ctx and ctx.conditional else self.severity,
                        related=site.node,
                    )

    def _freezes_parameters(self, model: FileModel) -> bool:
        """`p.requires_grad = False` somewhere: parameters are frozen one by one."""
        for (_, target), found in model.facts.assignments.items():
            if target.endswith(".requires_grad") and any(
                a.value is not None and literal_bool(a.value) is False for a in found
            ):
                return True
        return False

    def _trained_models(self, model: FileModel, site: CallSite) -> List[str]:
        """Names whose `.parameters()` feed the optimizer (through one assignment at most)."""
        arg = call_argument(site.node, "params", 0)
        if arg is None:
            return []
        values = [arg.value]
        name = dotted_name(arg.value)
        if name is not None:
            found = model.reaching_assignment(name, site.ctx, site.order)
            if found is None or found.value is None:
                return []
            values = [found.value]
        names: List[str] = []
        for value in values:
            if _mentions_attribute(value, "requires_grad"):
                return []  # only the unfrozen part is trained: adapters, a head
            for call in _small_calls(value):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                    base = dotted_name(func.value)
                    if base is not None and base not in names:
                        names.append(base)
        return names

    def _last_cast(self, model: FileModel, name: str, opt: CallSite) -> Optional[Tuple[str, cst.Call, Context]]:
        """The last dtype cast applied to the object ``name`` holds before the optimizer is built."""
        assigned = [a for a in model.assignments(name, opt.ctx) if a.order < opt.order and a.value is not None]
        # A new object (not `model = model.to(...)`) starts a fresh history.
        fresh = [a.order for a in assigned if _chain_base(a.value) != name]
        since = max(fresh, default=0)
        events: List[Tuple[int, str, cst.Call, Context]] = []
        for a in assigned:
            if a.order >= since:
                cast = _chain_cast(model, a.value)
                if cast is not None:
                    events.append((a.order, cast[0], cast[1], a.ctx))
        for method in ("half", "bfloat16", "float", "double", "to", "type"):
            for site in model.facts.calls_by_method.get(method, ()):
                if site.receiver_name != name or not since < site.order < opt.order:
                    continue
                if site.ctx.function is not opt.ctx.function:
                    continue
                kind = _cast_kind(model, site.node)
                if kind is not None:
                    events.append((site.order, kind, site.node, site.ctx))
        if not events:
            return None
        _, kind, node, ctx = max(events, key=lambda e: e[0])
        return kind, node, ctx


# Keyword arguments through which frameworks and configs choose a precision.
_PRECISION_KEYWORDS = frozenset(
    {"precision", "mixed_precision", "bf16", "fp16", "tf32", "torch_dtype", "amp", "use_amp", "half", "bf16_full_eval"}
)
# Packages that set precision (and often TF32) themselves, from arguments or a launch config.
_PRECISION_FRAMEWORKS = (
    "lightning", "pytorch_lightning", "accelerate", "deepspeed", "apex", "colossalai", "bitsandbytes",
)
_MATMUL_LAYERS = frozenset(
    """Linear Bilinear MultiheadAttention Transformer TransformerEncoder TransformerDecoder
    TransformerEncoderLayer TransformerDecoderLayer LSTM GRU RNN""".split()
)
_MATMUL_FUNCTIONS = frozenset(
    """torch.matmul torch.mm torch.bmm torch.einsum torch.addmm torch.baddbmm torch.nn.functional.linear
    torch.nn.functional.scaled_dot_product_attention""".split()
)
_SET_PRECISION = 'torch.set_float32_matmul_precision("high")'


def _binds_torch(statement: cst.CSTNode) -> bool:
    """`import torch` or `import torch.nn` (both bind the name `torch`) in a statement line."""
    for small in getattr(statement, "body", ()):
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted_name(alias.name) or ""
                if alias.asname is None and full.split(".")[0] == "torch":
                    return True
                if alias.asname is not None and full == "torch" and dotted_name(alias.asname.name) == "torch":
                    return True
    return False


class Fp32MatmulAtHighestPrecision(Rule):
    code = "GPU305"
    name = "fp32-matmul-highest-precision"
    severity = Severity.INFO
    summary = "CUDA training entirely in float32 with TF32 matmuls left off"
    what = """
        A CUDA training script with matmul-heavy layers (`nn.Linear`, attention, RNNs,
        `torch.matmul`...) that never chooses a precision: no autocast, no
        `torch.set_float32_matmul_precision(...)`, no `torch.backends.cuda.matmul.allow_tf32`
        or `fp32_precision` (torch 2.9+) setting, no `.half()`/`.bfloat16()` model, no
        GradScaler, and no framework precision argument (Lightning `precision=`, Accelerate
        `mixed_precision=`, Hugging Face `bf16=`/`fp16=`/`tf32=`). Reported once per file, at
        the first backward (or optimizer step) of the training loop.
    """
    why = """
        Since torch 1.12, float32 matrix multiplications run at "highest" precision by default
        and skip the TF32 tensor cores of Ampere and newer GPUs (convolutions still use TF32).
        Allowing TF32 ("high") typically makes those matmuls several times faster, at about
        the precision of bfloat16 mixed training. It is a one-line, global choice; scripts that
        need full float32 accuracy should say so explicitly.
    """
    example = """
        import torch

        model = MLP().cuda()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
    """
    instead = """
        import torch
        torch.set_float32_matmul_precision("high")  # TF32 tensor cores for float32 matmuls

        model = MLP().cuda()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
        # or, for more speed: bfloat16 autocast around the forward pass and the loss
    """
    hint = 'call `torch.set_float32_matmul_precision("high")` once, or train with bf16 autocast'
    fixable = "unsafe"
    requires = (("cuda",), ("backward", ".step("))

    VALID = [
        Case(
            """
            import torch
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
            model = nn.Linear(1024, 1024).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="TF32 allowed with the old flags",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            def configure(cfg):
                torch.backends.cuda.matmul.fp32_precision = "tf32"

            model = nn.TransformerEncoder(layer, num_layers=6).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="the torch 2.9 setting, in a helper",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="bf16 autocast",
        ),
        Case(
            """
            import lightning as L
            import torch.nn as nn

            class LitModel(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Linear(128, 10)

            trainer = L.Trainer(accelerator="cuda", precision="bf16-mixed")
            trainer.fit(LitModel())
            """,
            note="Lightning chooses the precision",
        ),
        Case(
            """
            from transformers import AutoModelForCausalLM
            import torch
            model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16).cuda()
            for batch in loader:
                loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
                loss.backward()
                optimizer.step()
            """,
            note="a bf16 checkpoint",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            torch.set_float32_matmul_precision(args.matmul_precision)
            model = nn.Linear(64, 64).to("cuda")
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="precision chosen by a flag",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="no CUDA in the script",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            torch.backends.cuda.matmul.allow_tf32 = False  # bit-exact regression tests
            model = nn.Linear(256, 256).cuda()
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="explicitly kept at full precision",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            PTDTYPE = {"float32": torch.float32, "bfloat16": torch.bfloat16}[cfg.dtype]
            model = GPT(cfg).cuda().to(PTDTYPE)
            for x, y in loader:
                loss = model(x, y)
                loss.backward()
                optimizer.step()
            layer = nn.Linear(8, 8)
            """,
            note="dtype chosen from a table at run time",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            import torchvision
            model = torchvision.models.resnet50(num_classes=10).cuda()
            model.fc = nn.Linear(2048, 10).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            conv = nn.Conv2d(3, 3, 1)
            """,
            note="a convolution network with one linear head (convolutions already use TF32)",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            import torch.nn as nn

            model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                loss.backward()  # expect: GPU305 info
                optimizer.step()
            """,
            fixed="""
            import torch
            import torch.nn as nn
            torch.set_float32_matmul_precision("high")

            model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)).cuda()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                loss.backward()  # expect: GPU305 info
                optimizer.step()
            """,
        ),
        Case(
            """
            \"\"\"Train a small GPT.\"\"\"
            from __future__ import annotations
            import math
            import torch
            from torch import nn
            from model import GPT

            def train(model, loader, optimizer, device="cuda"):
                model.train()
                for step, (x, y) in enumerate(loader):
                    logits = model(x.to(device))
                    loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.to(device).flatten())
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()  # expect: GPU305 info
                    optimizer.step()

            attn = nn.MultiheadAttention(512, 8)
            """,
            fixed="""
            \"\"\"Train a small GPT.\"\"\"
            from __future__ import annotations
            import math
            import torch
            from torch import nn
            from model import GPT
            torch.set_float32_matmul_precision("high")

            def train(model, loader, optimizer, device="cuda"):
                model.train()
                for step, (x, y) in enumerate(loader):
                    logits = model(x.to(device))
                    loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.to(device).flatten())
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()  # expect: GPU305 info
                    optimizer.step()

            attn = nn.MultiheadAttention(512, 8)
            """,
            note="inserted after the last module-level import",
        ),
        Case(
            """
            import torch as th
            model = th.nn.LSTM(128, 256, num_layers=2).cuda()
            for seq, target in loader:
                out, _ = model(seq.cuda())
                loss = th.nn.functional.mse_loss(out, target.cuda())
                loss.backward()  # expect: GPU305 info
                opt.step()
            """,
            note="torch imported under another name: no fix",
        ),
        Case(
            """
            import torch
            from transformers import AutoModel

            class Trainer:
                def fit(self, loader):
                    for batch in loader:
                        out = self.model(**{k: v.to("cuda") for k, v in batch.items()})
                        out.loss.backward()  # expect: GPU305 info
                        self.optimizer.step()
                        self.optimizer.zero_grad()

            model = AutoModel.from_pretrained("bert-base-uncased")
            """,
            fixed="""
            import torch
            from transformers import AutoModel
            torch.set_float32_matmul_precision("high")

            class Trainer:
                def fit(self, loader):
                    for batch in loader:
                        out = self.model(**{k: v.to("cuda") for k, v in batch.items()})
                        out.loss.backward()  # expect: GPU305 info
                        self.optimizer.step()
                        self.optimizer.zero_grad()

            model = AutoModel.from_pretrained("bert-base-uncased")
            """,
            note="a Hugging Face model trained by hand",
        ),
        Case(
            """
            import torch
            import torch.nn.functional as F

            def train_step(w, x, y, opt):
                loss = F.mse_loss(torch.matmul(x, w), y)
                loss.backward()  # expect: GPU305 info
                opt.step()

            for x, y in loader:
                train_step(w, x.cuda(), y.cuda(), opt)
            """,
            fixed="""
            import torch
            import torch.nn.functional as F
            torch.set_float32_matmul_precision("high")

            def train_step(w, x, y, opt):
                loss = F.mse_loss(torch.matmul(x, w), y)
                loss.backward()  # expect: GPU305 info
                opt.step()

            for x, y in loader:
                train_step(w, x.cuda(), y.cuda(), opt)
            """,
            note="training step in a helper",
        ),
        Case(
            """
            import os
            import torch  # noqa: F401
            import torch.nn as nn
            device = torch.device("cuda")
            model = nn.Linear(4096, 4096).to(device)
            for x in loader:
                model(x.to(device)).pow(2).mean().backward()  # expect: GPU305 info
                optimizer.step()
            """,
            fixed="""
            import os
            import torch  # noqa: F401
            import torch.nn as nn
            torch.set_float32_matmul_precision("high")
            device = torch.device("cuda")
            model = nn.Linear(4096, 4096).to(device)
            for x in loader:
                model(x.to(device)).pow(2).mean().backward()  # expect: GPU305 info
                optimizer.step()
            """,
            note="a comment on an earlier import line",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if model.torch_version < (1, 12) or not model.uses_cuda:
            return  # before 1.12, TF32 matmuls were on by default
        if self._precision_chosen(model) or not self._matmul_heavy(model):
            return
        anchor = self._anchor(model)
        if anchor is None:
            return
        yield self.report(
            anchor.node,
            "float32 training on CUDA with matmuls at \"highest\" precision: TF32 tensor cores stay unused",
            fix=self._fix(model),
        )

    def _precision_chosen(self, model: FileModel) -> bool:
        facts = model.facts
        if facts.autocasts or model.uses_framework(*_PRECISION_FRAMEWORKS):
            return True
        if model.calls_to(GRAD_SCALER, "torch.set_float32_matmul_precision"):
            return True
        if model.method_calls("half", "bfloat16", "autocast", "set_float32_matmul_precision"):
            return True
        if any(q.endswith(".autocast") or q.endswith("Trainer") for q in facts.calls_by_qualname):
            return True
        for (_, target), found in facts.assignments.items():
            if target.endswith(".allow_tf32") or target.endswith("fp32_precision"):
                return True
            if any(self._names_low_precision(model, a.value) for a in found if a.value is not None):
                return True  # `dtype = torch.bfloat16 if args.bf16 else torch.float32`
        for site in facts.calls:
            name = site.method or dotted_name(site.node.func) or ""
            if "precision" in name.lower() or "tf32" in name.lower():
                return True  # `setup_precision(cfg)`, `enable_tf32()`: chosen in a helper
        for site in facts.calls:
            for arg in site.node.args:
                if arg.keyword is not None and arg.keyword.value in _PRECISION_KEYWORDS:
                    return True
                if arg.keyword is None or arg.keyword.value == "dtype":
                    if _dtype_of(model, arg.value) in ("fp16", "bf16"):
                        return True
        return False

    @staticmethod
    def _names_low_precision(model: FileModel, value: cst.BaseExpression) -> bool:
        """A value that is, or chooses between, 16-bit dtypes (a conditional or a table)."""
        candidates = [value]
        if isinstance(value, cst.Subscript):
            value = value.value  # `{"fp32": torch.float32, "bf16": torch.bfloat16}[cfg.dtype]`
        if isinstance(value, cst.IfExp):
            candidates = [value.body, value.orelse]
        elif isinstance(value, cst.Dict):
            candidates = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        return any(
            _LOW_PRECISION.get(model.imports.qualify(c) or "") in ("fp16", "bf16") for c in candidates
        )

    def _matmul_heavy(self, model: FileModel) -> bool:
        linear = 0
        convolutions = False
        for qualname, sites in model.facts.calls_by_qualname.items():
            if qualname in _MATMUL_FUNCTIONS or qualname.split(".")[0] in ("transformers", "timm"):
                return True
            if qualname.startswith("torch.nn."):
                last = qualname.rsplit(".", 1)[-1]
                if last in ("Linear", "Bilinear"):
                    linear += len(sites)
                elif last in _MATMUL_LAYERS:
                    return True
                elif last.startswith("Conv"):
                    convolutions = True
        return linear >= 2 or (linear == 1 and not convolutions)

    def _anchor(self, model: FileModel) -> Optional[CallSite]:
        for method in ("backward", "step"):
            sites = sorted(model.method_calls(method), key=lambda s: s.order)
            for site in sites:
                receiver = (site.receiver_name or "").rsplit(".", 1)[-1]
                if method == "step" and not re.search(r"optim|(^|_)opt($|_)", receiver, re.IGNORECASE):
                    continue
                if model.heat(site.ctx) is not None:
                    return site
        return None

    def _fix(self, model: FileModel) -> Optional[FixSpec]:
        if model.imports.aliases.get("torch") != "torch":
            return None
        top_level = {id(statement) for statement in model.module.body}
        imports = [s for s in model.facts.module_imports if id(s) in top_level]
        if not imports or not any(_binds_torch(s) for s in imports):
            return None
        last = imports[-1]
        if not isinstance(last, cst.SimpleStatementLine) or last.trailing_whitespace.comment is not None:
            return None
        newline = model.module.default_newline
        return FixSpec(
            f"add `{_SET_PRECISION}` after the imports",
            (NodeEdit(last, f"{newline}{_SET_PRECISION}", "after"),),
            Applicability.UNSAFE,
        )
