"""Mixed precision (GPU3xx)."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from advisor.findings import Severity
from advisor.model import FileModel
from advisor.model.facts import AutocastSite
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import GRAD_SCALER, dotted_name
from advisor.rules.base import Case, Report, Rule

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
