"""GPU303 `deprecated-amp-api`: `torch.cuda.amp` / `torch.cpu.amp` autocast or GradScaler (deprecated)."""

from __future__ import annotations
import dataclasses
from typing import Iterator, Optional, Tuple
import libcst as cst
from advisor.findings import Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.alternatives import in_handler, is_fallback, under_version_test
from advisor.model.names import GRAD_SCALER, dotted_name
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule, snippet
from advisor.rules.precision.dtypes import spelled_name


# The release whose `torch.cuda.amp` entry points warn that they are deprecated.
_DEPRECATED_FROM = (2, 4)

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


def _oldest_supported(model: FileModel) -> Tuple[int, int]:
    """The oldest torch the code must run on: the configured `torch-version`, or the lower
    bound the project's requirement files declare (`torch>=1.13.1`) when that is older."""
    required = model.project.required_torch() if model.project is not None else None
    return min(model.torch_version, required) if required is not None else model.torch_version


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
        is offered when the oldest torch the project supports is 2.3 or later (the configured
        `torch-version`, or an older lower bound in the requirement files, `torch>=1.13.1`, or
        a Poetry project's `torch = "^2.1"`;
        below 2.3 a GradScaler is information, having no replacement there), and for a name
        imported on its own only when `torch` itself is imported too. The old autocast kept in
        a name (`amp_autocast = torch.cuda.amp.autocast`, then `with amp_autocast():`) is
        reported where it is assigned, without a fix; so is one a helper returns for its callers
        to enter (`return torch.cuda.amp.autocast` in `get_autocast(precision)`). Where the
        project pins a torch older than 2.4 (`torch==1.13.1` in a requirements file, a Poetry
        dependency `torch = "2.2.1"`, a
        Dockerfile, a conda environment, a README's install command or an item of its list of the
        environment it ran in, `- PyTorch = 1.9.1`; a README or script in a
        sub-folder pins the files under it only), which does not warn
        about these entry points yet, the message says so, and below 2.3 no fix is offered;
        below 1.10, which has no `torch.autocast` to move to, these are information. A call under a flag that no run of the
        project turns on (`if self.args.fp16:` where no launch script or README passes `--fp16`,
        also the `else` of `if not fp16:` when every call hands the function a flag left False,
        `if self.use_amp:` where no construction passes `use_amp=True`) is information: the old
        call stays in the code, but no shipped run reaches it. So is one in a function or class
        every call or construction of which sits under such a flag (`loss_scaler =
        NativeScaler()` only under `if args.amp:`), and an old autocast kept in a name under one.
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
    fixable = Fixable.SOMETIMES_SAFE
    fix_safety = """
        The fix rewrites the call to `torch.amp.autocast("cuda", ...)`, `torch.amp.autocast("cpu",
        ...)` or `torch.amp.GradScaler("cuda", ...)`, keeping every argument (positional autocast
        arguments become keywords). The old entry points are thin wrappers around these, so the
        behaviour is the same. It assumes:

        - the code runs on torch 2.3 or later (the configured `torch-version`): older releases
          have no `torch.amp.GradScaler`;
        - the called name still refers to the imported `torch.cuda.amp` or `torch.cpu.amp` object.
          The rule reports nothing where a `def`, class, assignment or parameter of the same
          name may reach the call (a no-op `autocast()` helper of the script's own), or where
          the file imports the name from two places (`try: from torch.amp import autocast`
          with a `torch.cuda.amp` fallback under `except ImportError:`, which only runs on old
          torch). A name rebound in another module and imported from there is not followed;
        - the call is not a compatibility fallback: the rule reports nothing where the other side
          of a choice calls the new API (`torch.amp.GradScaler("cuda") if TORCH_2_4 else
          torch.cuda.amp.GradScaler()`, the two arms of an `if`, or a `try` body that calls it
          with the old call in an `except AttributeError:` handler), nor in an arm of a test of
          the installed torch's version (`if torch.__version__.startswith("2"): ... else:
          autocast = torch.cuda.amp.autocast`), since rewriting it breaks the old torch it
          exists for;
        - the `torch` name it writes refers to the torch package where the call is.

        Not offered below torch-version 2.3, when no name for the `torch` package is imported, or
        when positional arguments come from `*args`.
    """
    references = (
        (
            "Automatic mixed precision (the `torch.cuda.amp` entry points are deprecated)",
            "https://docs.pytorch.org/docs/stable/amp.html",
        ),
        (
            "pytorch/pytorch#126062: deprecate the device-specific autocast and GradScaler",
            "https://github.com/pytorch/pytorch/pull/126062",
        ),
        (
            "torch/cuda/amp/autocast_mode.py",
            "https://github.com/pytorch/pytorch/blob/main/torch/cuda/amp/autocast_mode.py",
        ),
    )
    requires = (("amp",), ("cuda", "cpu"))

    def check(self, model: FileModel) -> Iterator[Report]:
        pin = model.project.pinned_torch(model.real_path) if model.project is not None else None
        for report in self._reports(model):
            if pin is not None and pin < _DEPRECATED_FROM:
                # The release the project ships does not warn yet: the message says so, and
                # before 2.3, which has no `torch.amp.GradScaler`, no rewrite is offered.
                data = dict(report.data, pinned="%d.%d" % pin)
                # Before 1.10 there is no `torch.autocast` either: nothing to move to yet.
                severity = Severity.INFO if pin < (1, 10) else report.severity
                yield dataclasses.replace(report, fix=report.fix if pin >= (2, 3) else None, data=data,
                                          severity=severity,
                                          template=report.template + " (from torch 2.4; the project pins torch {pinned})")
            else:
                yield report

    def _reports(self, model: FileModel) -> Iterator[Report]:
        sites = model.calls_to("torch.cuda.amp.autocast", "torch.cpu.amp.autocast", GRAD_SCALER)

        def replacements() -> list:
            found = model.calls_to("torch.autocast", GRAD_SCALER)
            return [s for s in found if spelled_name(model, s.node.func) not in _DEPRECATED_AMP]

        for site in sites:
            spelled = spelled_name(model, site.node.func)
            entry = _DEPRECATED_AMP.get(spelled or "")
            if entry is None or not model.holds_its_import(site.node.func, site.ctx, site.order):
                continue
            if is_fallback(model, site, replacements, "amp") or under_version_test(model, site.ctx):
                continue  # the old API kept for old torch, beside the new one
            kind, device = entry
            replacement = f'torch.amp.{kind}("{device}", ...)'
            shown = spelled.replace(".autocast_mode", "").replace(".grad_scaler", "")
            message = "`{deprecated}` is deprecated; use `{replacement}`"
            severity = None
            data = {"deprecated": shown, "replacement": replacement, "device": device}
            if _oldest_supported(model) < (2, 3):
                if kind == "GradScaler":
                    severity = Severity.INFO  # no replacement before torch 2.3
                    message += " once the project requires torch 2.3"
                else:
                    message = '`{deprecated}` is deprecated; `torch.autocast("{device}", ...)` replaces it'
                    if _oldest_supported(model) < (1, 10):
                        severity = Severity.INFO  # `torch.autocast` itself came with torch 1.10
                        message += " once the project requires torch 1.10"
            off = model.guards.switched_off(site.ctx) or model.guards.switched_off_by_callers(site.ctx)
            test = off.test if off is not None else model.guards.switched_off_arm(site.node, site.ctx, site.order)
            if test is not None:
                # `if self.args.fp16: scaler = torch.cuda.amp.GradScaler()` where no shipped run
                # passes `--fp16`: the call stays in the code, but no run reaches it.
                severity = Severity.INFO
                data["flag"] = snippet(model, test)
                message += " (under `{flag}`, which no run of the project turns on)"
            yield self.report(site.node, message, severity=severity, fix=self._fix(model, site, kind, device),
                              data=data)
        yield from self._references(model)
        yield from self._returned(model)

    def _references(self, model: FileModel) -> Iterator[Report]:
        """`amp_autocast = torch.cuda.amp.autocast` (timm's scripts, then `with amp_autocast():`):
        the deprecated entry point kept in a name and called through it. No fix: the new one
        takes the device first, which every call through the name would have to pass."""
        for (_, _name), found in model.facts.assignments.items():
            for assignment in found:
                value = assignment.value
                if type(value) is cst.IfExp:
                    # `autocast = torch.cuda.amp.autocast if cfg.use_fp16 else nullcontext`
                    value = value.body if type(value.body) is cst.Attribute else value.orelse
                if type(value) is not cst.Attribute or assignment.index is not None or assignment.ctx.in_try:
                    continue  # in a `try:` whose `except` defines a stand-in: old torch's fallback
                if under_version_test(model, assignment.ctx):
                    continue  # `else: autocast = torch.cuda.amp.autocast` under a torch version test
                # `if args.amp: amp_autocast = torch.cuda.amp.autocast` where no shipped run passes
                # `--amp`: information, as for a call under such a flag.
                report = self._kept_autocast(model, value, assignment.ctx, "kept in a name and called through it")
                if report is not None:
                    yield report

    def _returned(self, model: FileModel) -> Iterator[Report]:
        """`return torch.cuda.amp.autocast` from a helper that picks the autocast for a precision
        setting (open_clip's `get_autocast(precision)`): its callers enter the old entry point.
        No fix: each caller calls what it returns. (A lambda that calls it, returned beside it
        for another precision, is left alone: the arm a run takes is the setting's to say.)"""
        for info in model.facts.functions.values():
            for returned in info.return_sites:
                value = returned.value
                if type(value) is not cst.Attribute or returned.ctx.in_try or in_handler(model, returned.ctx) or (
                        under_version_test(model, returned.ctx)):
                    continue
                report = self._kept_autocast(model, value, returned.ctx, "returned for its callers to enter",
                                             order=returned.order)
                if report is not None:
                    yield report

    def _kept_autocast(self, model: FileModel, value: cst.Attribute, ctx, how: str,
                       order: Optional[int] = None) -> Optional[Report]:
        """The finding for the old autocast spelled (not called) at ``value``, ``how`` it reaches
        its callers; None for anything else. Information under a flag no run turns on (and, with
        ``order``, in an arm of a parameter test no call takes)."""
        spelled = spelled_name(model, value)
        entry = _DEPRECATED_AMP.get(spelled or "")
        if entry is None or entry[0] != "autocast":
            return None
        kind, device = entry
        data = {"deprecated": spelled.replace(".autocast_mode", ""),
                "replacement": f'torch.amp.{kind}("{device}", ...)', "device": device}
        message = "`{deprecated}` is deprecated (" + how + "); use `functools.partial(torch.amp.autocast, \"{device}\")`"
        off = model.guards.switched_off(ctx) or model.guards.switched_off_by_callers(ctx)
        test = off.test if off is not None else (
            model.guards.switched_off_arm(value, ctx, order) if order is not None else None)
        severity = None
        if test is not None:
            severity = Severity.INFO
            data["flag"] = snippet(model, test)
            message += " (under `{flag}`, which no run of the project turns on)"
        return self.report(value, message, severity=severity, data=data)

    def _fix(self, model: FileModel, site: CallSite, kind: str, device: str) -> Optional[FixSpec]:
        if _oldest_supported(model) < (2, 3):
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
