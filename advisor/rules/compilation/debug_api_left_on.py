"""GPU705 `debug-api-left-on`: anomaly detection, the autograd profiler or gradcheck left on in training."""

from __future__ import annotations
import re
from typing import Iterator, List, Optional, Sequence
import libcst as cst
from advisor.findings import Applicability, Fixable
from advisor.model import CallSite, FileModel
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import dotted_name
from advisor.model.profiling import deliberate_profile
from advisor.model.walk import children
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.rules.compilation.compile_facts import trains_somewhere, enclosing_tests


def _is_main_guard(test: cst.BaseExpression) -> bool:
    return (
        type(test) is cst.Comparison
        and type(test.left) is cst.Name
        and test.left.value == "__name__"
    )


def _is_constant_true(test: cst.BaseExpression) -> bool:
    if type(test) is cst.Name and test.value == "True":
        return True
    return type(test) is cst.Integer and test.value not in ("0",)


_SET_ANOMALY = ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly")


_ANOMALY_CONTEXT = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")


_PROFILERS = ("torch.autograd.profiler.profile", "torch.autograd.profiler.emit_nvtx")


_GRADCHECKS = (
    "torch.autograd.gradcheck",
    "torch.autograd.gradgradcheck",
    "torch.autograd.gradcheck.gradcheck",
    "torch.autograd.gradcheck.gradgradcheck",
)


_OPTIMIZER_NAME = re.compile(r"optim|(^|_)opt($|_)", re.IGNORECASE)


def _in_test(site: CallSite) -> bool:
    function = site.ctx.function
    return function is not None and function.node.name.value.startswith("test")


def _find_with(root: cst.CSTNode, call: cst.Call) -> Optional[cst.With]:
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if type(node) is cst.With and any(item.item is call for item in node.items):
            return node
        if node is not root and type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend(children(node))
    return None


def _block_trains(model: FileModel, block: cst.CSTNode, class_name: Optional[str]) -> bool:
    """The block runs backward or an optimizer step, itself or through functions of this file."""
    stack: List[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend(children(node))
        if not type(node) is cst.Call:
            continue
        func = node.func
        key = None
        if type(func) is cst.Attribute:
            method = func.attr.value
            receiver = dotted_name(func.value) or ""
            if method == "backward":
                return True
            if method == "step" and _OPTIMIZER_NAME.search(receiver.rsplit(".", 1)[-1]):
                return True
            if model.imports.qualify(func) is None:
                key = f"{class_name}.{method}" if receiver in ("self", "cls") and class_name else f".{method}"
        elif type(func) is cst.Name and model.imports.qualify(func) is None:
            key = func.value
        if key is not None and (model.function_trains(key) or model.function_has_training_loop(key)):
            return True
    return False


class DebugApiLeftOn(Rule):
    code = "GPU705"
    name = "debug-api-left-on"
    summary = "anomaly detection, the autograd profiler or gradcheck left on in training"
    what = """
        `torch.autograd.set_detect_anomaly(True)` in a file that trains;
        `with torch.autograd.detect_anomaly():`, `torch.autograd.profiler.profile(...)` and
        `torch.autograd.profiler.emit_nvtx(...)` around training code; `torch.autograd.gradcheck`
        and `gradgradcheck` inside training code. Calls behind a flag (`if args.debug:`), with
        a non-literal switch (`set_detect_anomaly(args.debug)`, `profile(enabled=cfg.profile)`)
        or switched off are not reported. Nor is profiling done on purpose: a profiler around a
        few counted steps (`for _ in range(10):`) whose records the code reads afterwards
        (`prof.key_averages()`, `prof.export_chrome_trace(...)`), or `emit_nvtx` in a file that
        starts the CUDA profiler itself.
    """
    why = """
        These tools trade speed for information. Anomaly mode records a stack trace for every
        autograd node and checks every backward result for NaN, which forces a host-device
        sync per operation; a small model measured about twice as slow with it on. The autograd
        profiler records every operator call, emit_nvtx adds NVTX ranges to each, and gradcheck
        runs the function many extra times in double precision. Left on after debugging, they
        slow every step of every run.
    """
    example = """
        torch.autograd.set_detect_anomaly(True)
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    instead = """
        torch.autograd.set_detect_anomaly(args.detect_anomaly)  # off unless asked for
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    hint = "remove it, or put it behind a debug flag that is off by default"
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix switches `torch.autograd.set_detect_anomaly(True)` to `False`. Always offered as
        unsafe: a backward that produces NaN then no longer raises at the operation that caused
        it, so a run the author was debugging carries on with bad values.

        Not offered for `detect_anomaly()` blocks, the autograd profiler, `emit_nvtx` or
        `gradcheck`: removing a block or a call is a change of structure.
    """
    references = (
        (
            "Performance Tuning Guide: disable debugging APIs",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#disable-debugging-apis",
        ),
        (
            "Automatic differentiation package: anomaly detection",
            "https://docs.pytorch.org/docs/stable/autograd.html#anomaly-detection",
        ),
    )
    requires = (("anomaly", "profiler", "emit_nvtx", "gradcheck"),)

    def check(self, model: FileModel) -> Iterator[Report]:
        trains = None
        for site in model.calls_to(*_SET_ANOMALY):
            arg = call_argument(site.node, "mode", 0)
            if arg is None or literal_bool(arg.value) is not True or _in_test(site) or self._behind_flag(model, site):
                continue
            if trains is None:
                trains = trains_somewhere(model) or any(f.direct_marker for f in model.facts.functions.values())
            if not trains:
                continue
            fix = FixSpec("switch anomaly detection off", (NodeEdit(arg.value, "False"),), Applicability.UNSAFE)
            yield self.report(
                site.node,
                "anomaly detection is on for the whole run: every backward records stack traces and checks "
                "for NaN, roughly halving training speed",
                fix=fix,
            )
        for site in model.calls_to(*_ANOMALY_CONTEXT, *_PROFILERS):
            if star_kwargs(site.node):
                continue
            if site.qualname in _PROFILERS:
                enabled = call_argument(site.node, "enabled", 0)
                if enabled is not None and literal_bool(enabled.value) is not True:
                    continue
                if deliberate_profile(model, site):
                    continue  # a measurement made on purpose: its records are read
            if _in_test(site) or self._behind_flag(model, site) or not self._around_training(model, site):
                continue
            what = "anomaly detection" if site.qualname in _ANOMALY_CONTEXT else f"`{site.qualname.rsplit('.', 1)[-1]}`"
            yield self.report(
                site.node,
                "{tool} wraps training code: every operation of every step pays for the debugging records",
                data={"tool": what},
            )
        for site in model.calls_to(*_GRADCHECKS):
            if _in_test(site) or not model.in_training_code(site.ctx) or self._behind_flag(model, site):
                continue
            yield self.report(
                site.node,
                "`{function}` runs inside training code: it re-evaluates the function "
                "many times in double precision",
                data={"function": site.qualname.rsplit('.', 1)[-1]},
            )

    @staticmethod
    def _around_training(model: FileModel, site: CallSite) -> bool:
        if model.in_training_code(site.ctx):
            return True
        if not site.with_item:
            return False
        function = site.ctx.function
        roots: Sequence[cst.CSTNode]
        if function is not None:
            roots = [function.node]
        else:
            roots = [s for s in model.module.body if not type(s) in (cst.FunctionDef, cst.ClassDef)]
        for root in roots:
            found = _find_with(root, site.node)
            if found is not None:
                return _block_trains(model, found.body, site.ctx.class_name)
        return False

    @staticmethod
    def _behind_flag(model: FileModel, site: CallSite) -> bool:
        """Under an `if` (or `x if c else y`) whose test is not a constant or the main guard."""
        function = site.ctx.function
        if function is not None:
            roots: Sequence[cst.CSTNode] = [function.node]
        else:  # module-level code only: function and class bodies are not entered
            roots = [s for s in model.module.body if not type(s) in (cst.FunctionDef, cst.ClassDef)]
        for root in roots:
            tests = enclosing_tests(root, site.node)
            if tests is not None:
                return any(not (_is_main_guard(t) or _is_constant_true(t)) for t in tests)
        return False
