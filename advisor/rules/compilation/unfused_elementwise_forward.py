"""GPU701 `unfused-elementwise-forward`: a module's `forward` runs a long chain of elementwise ops and is never compiled."""

from __future__ import annotations
from typing import Iterator, Set
from advisor.findings import Severity
from advisor.model import FileModel
from advisor.rules.base import Report, Rule
from advisor.rules.compilation.body_scan import scan_body
from advisor.rules.compilation.compile_facts import JIT, disabled, compile_facts


_NN_MODULE = "torch.nn.Module"


def _nn_module_classes(model: FileModel) -> Set[str]:
    """Classes of this file that subclass torch.nn.Module, directly or through each other."""
    classes = model.facts.classes
    out: Set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, info in classes.items():
            if name not in out and any(b == _NN_MODULE or b in out for b in info.bases):
                out.add(name)
                changed = True
    return out


_MIN_POINTWISE = 6


class UnfusedElementwiseForward(Rule):
    code = "GPU701"
    name = "unfused-elementwise-forward"
    severity = Severity.INFO
    summary = "a module's `forward` runs a long chain of elementwise ops and is never compiled"
    what = """
        The `forward` method of an `nn.Module` subclass that applies six or more elementwise
        operations to tensors (arithmetic, comparisons, `torch.exp`, `.sigmoid()`,
        `masked_fill`, ...) while doing little else, when neither the method (`@torch.compile`)
        nor a model of that class (`torch.compile(model)`, `model.compile()`, `torch.jit.script`)
        is compiled anywhere in the file. Forwards that mostly call submodules, matrix products
        or fused functions (`F.gelu`, `F.layer_norm`, `F.scaled_dot_product_attention`) are left
        alone, as are short ones.
    """
    why = """
        In eager mode every elementwise operation is its own kernel: it reads its inputs from GPU
        memory and writes a full-size result back, only for the next operation to read it again.
        These kernels are limited by memory bandwidth, so a chain of eight of them costs about
        eight times what one fused kernel would. `torch.compile` fuses such chains into a single
        kernel that reads each input once.
    """
    example = """
        class FocalLoss(nn.Module):
            def forward(self, logits, target):
                ce = F.cross_entropy(logits, target, reduction="none")
                p = torch.exp(-ce)
                loss = self.alpha * (1 - p) ** self.gamma * ce
                return loss.mean()

        criterion = FocalLoss()
    """
    instead = """
        class FocalLoss(nn.Module):
            @torch.compile
            def forward(self, logits, target):
                ce = F.cross_entropy(logits, target, reduction="none")
                p = torch.exp(-ce)
                loss = self.alpha * (1 - p) ** self.gamma * ce
                return loss.mean()

        criterion = FocalLoss()  # or: criterion = torch.compile(FocalLoss())
    """
    hint = "decorate `forward` with `@torch.compile`, or compile the model that holds this module"
    fix_safety = """
        No automatic fix. Compiling changes start-up time, may hit graph breaks or recompiles, and
        is best applied to the whole model rather than to one module's `forward`.
    """
    references = (
        (
            "Performance Tuning Guide: fuse operations",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#fuse-operations",
        ),
        ("torch.compile", "https://docs.pytorch.org/docs/stable/generated/torch.compile.html"),
        (
            "Introduction to torch.compile",
            "https://docs.pytorch.org/tutorials/intermediate/torch_compile_tutorial.html",
        ),
    )
    requires = (("forward",), ("Module",))

    def check(self, model: FileModel) -> Iterator[Report]:
        modules = _nn_module_classes(model)
        if not modules:
            return
        facts = compile_facts(model)
        if facts.unresolved_module_compile:
            return  # a model of unknown class is compiled: it may hold these modules
        for name in sorted(modules):
            info = model.facts.functions.get(f"{name}.forward")
            if info is None or name in facts.fused_classes or info.key in facts.compiled_functions:
                continue
            if disabled(info) or any(d in JIT for d in info.decorators):
                continue
            scan = scan_body(model, info)
            if scan.pointwise < _MIN_POINTWISE or scan.pointwise < 2 * scan.heavy:
                continue
            yield self.report(
                info.node.name,
                "`{module}.forward` runs {operations} elementwise operations, each a separate "
                "memory-bound kernel, and nothing in this file compiles it",
                data={"module": name, "operations": scan.pointwise},
            )
