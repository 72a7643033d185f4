"""GPU706 `kernel-shape-knobs`: layer sizes, biases and optimizer flags that waste GPU kernel time."""

from __future__ import annotations
from typing import Dict, Iterator, List, Optional
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import GRAD_SCALER, dotted_name
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule, snippet


def literal_int(expr: cst.BaseExpression) -> Optional[int]:
    """An integer literal or constant arithmetic on them (`3 * 32 * 32`)."""
    if type(expr) is cst.Integer:
        try:
            return int(expr.value.replace("_", ""), 0)
        except ValueError:
            return None
    if type(expr) is cst.BinaryOperation:
        left, right = literal_int(expr.left), literal_int(expr.right)
        if left is None or right is None:
            return None
        if type(expr.operator) is cst.Add:
            return left + right
        if type(expr.operator) is cst.Subtract:
            return left - right
        if type(expr.operator) is cst.Multiply:
            return left * right
        if type(expr.operator) is cst.FloorDivide and right:
            return left // right
    return None


def _has_star(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


_CONV_BN = {
    "torch.nn.Conv1d": ("torch.nn.BatchNorm1d", "torch.nn.SyncBatchNorm"),
    "torch.nn.Conv2d": ("torch.nn.BatchNorm2d", "torch.nn.SyncBatchNorm"),
    "torch.nn.Conv3d": ("torch.nn.BatchNorm3d", "torch.nn.SyncBatchNorm"),
}


_HALF_DTYPES = frozenset({"torch.float16", "torch.bfloat16"})


_OUTPUT_NAMES = frozenset(
    {"fc", "fc_out", "out", "output", "outputs", "out_layer", "output_layer", "logits", "cls", "decoder",
     "readout", "final", "last", "pred", "predictor", "score", "scores"}
)


def _mixed_precision(model: FileModel) -> bool:
    if model.facts.autocasts or model.calls_to("torch.autocast", "torch.cuda.amp.autocast", GRAD_SCALER):
        return True
    if model.method_calls("half", "bfloat16"):
        return True
    for site in model.facts.calls:
        for arg in site.node.args:
            value = arg.value
            if type(value) in (cst.Attribute, cst.Name) and model.imports.qualify(value) in _HALF_DTYPES:
                return True
            if (
                arg.keyword is not None
                and arg.keyword.value in ("mixed_precision", "precision")
                and type(value) is cst.SimpleString
                and "16" in value.value
            ):
                return True
    return False


def _ties_weights(model: FileModel) -> bool:
    """`self.lm_head.weight = self.wte.weight`: an embedding doubles as the output projection."""
    for (_, target), found in model.facts.assignments.items():
        if target.endswith(".weight") and any(
            a.value is not None and (dotted_name(a.value) or "").endswith(".weight") for a in found
        ):
            return True
    return False


class KernelShapeKnobs(Rule):
    code = "GPU706"
    name = "kernel-shape-knobs"
    severity = Severity.INFO
    summary = "layer sizes, biases and optimizer flags that waste GPU kernel time"
    what = """
        Three small settings with a measurable cost. `nn.Linear` and `nn.Embedding` sizes written
        as literals of 64 or more that are not multiples of 8, in a file that uses mixed
        precision (autocast, `.half()`, bfloat16, GradScaler); output layers of classifiers (the
        last Linear of an `nn.Sequential`, a layer named like `head`/`classifier`/`fc_out`, a
        class count below 64, or the output size of the last Linear a module builds) are left
        alone, and an Embedding's row count only matters when its weight is tied to an output
        layer. An `nn.Conv2d` (or 1-D/3-D) keeping its default bias when the next layer of the
        same `nn.Sequential(...)` is a BatchNorm. And `foreach=False` passed to a `torch.optim`
        optimizer.
    """
    why = """
        Tensor cores work on tiles whose sides are multiples of 8 elements in half precision; a
        matrix multiply with an odd size pads internally or falls back to slower kernels, often
        costing more than the extra rows would. BatchNorm subtracts the per-channel mean right
        after the convolution, so the convolution's bias is cancelled: it only costs an extra
        read and write of the activations and a parameter to update. `foreach=False` updates
        each parameter with its own handful of kernels instead of a few batched kernels for all
        of them, which on models with many small tensors makes the optimizer step launch-bound.
    """
    example = """
        block = nn.Sequential(nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU())
        proj = nn.Linear(768, 3100)  # under torch.autocast
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=False)
    """
    instead = """
        block = nn.Sequential(nn.Conv2d(64, 128, 3, padding=1, bias=False), nn.BatchNorm2d(128), nn.ReLU())
        proj = nn.Linear(768, 3104)
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)  # foreach is the CUDA default
    """
    hint = "round layer sizes up to a multiple of 8, drop biases that BatchNorm cancels, keep the optimizer's foreach default"
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix passes `bias=False` to a convolution that a BatchNorm follows in the same
        `nn.Sequential`. Always offered as unsafe: the module's `state_dict()` loses the bias
        keys, so existing checkpoints no longer load strictly, and a trained model changes its
        outputs in evaluation mode (the running mean was learned with the bias).

        Not offered for layer sizes that are not multiples of 8 (the size is part of the model's
        design) nor for `foreach=False` (it may have been set on purpose).
    """
    references = (
        (
            "Performance Tuning Guide: use mixed precision and AMP (sizes in multiples of 8)",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-mixed-precision-and-amp",
        ),
        (
            "Performance Tuning Guide: disable bias for convolutions directly followed by a batch norm",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#disable-bias-for-convolutions-directly-followed-by-a-batch-norm",
        ),
        ("torch.optim (`foreach` implementations)", "https://docs.pytorch.org/docs/stable/optim.html"),
        ("NVIDIA deep learning performance guide", "https://docs.nvidia.com/deeplearning/performance/index.html"),
    )
    requires = (("Linear", "Embedding", "BatchNorm", "foreach"),)

    def check(self, model: FileModel) -> Iterator[Report]:
        if model.uses_cuda and _mixed_precision(model):
            yield from self._sizes(model)
        yield from self._conv_bias(model)
        for site in model.facts.calls:
            qual = site.qualname or ""
            last = qual.rsplit(".", 1)[-1]
            if not qual.startswith("torch.optim.") or "lr_scheduler" in qual or not last[:1].isupper():
                continue
            arg = call_argument(site.node, "foreach", None)
            if arg is not None and literal_bool(arg.value) is False:
                yield self.report(
                    site.node,
                    "`{optimizer}(..., foreach=False)` updates parameters one tensor at a time; the batched "
                    "(foreach) update is the CUDA default (keep False only to save peak memory)",
                    data={"optimizer": last},
                )

    def _sizes(self, model: FileModel) -> Iterator[Report]:
        last_built: Dict[int, int] = {}  # id(function) -> order of the last Linear it builds
        linears = model.calls_to("torch.nn.Linear")
        for site in linears:
            function = site.ctx.function
            if function is not None and function.class_name is not None:
                last_built[id(function)] = max(last_built.get(id(function), 0), site.order)
        for site in linears:
            if _has_star(site.node) or self._output_layer(model, site):
                continue
            fin = self._size(site, "in_features", 0)
            fout = self._size(site, "out_features", 1)
            if fout is not None and fout < 64:
                continue  # a class count or a small projection
            function = site.ctx.function
            dims = [fin]
            if not (function is not None and last_built.get(id(function)) == site.order):
                dims.append(fout)
            yield from self._report_sizes(site, "nn.Linear", dims)
        tied = None
        for site in model.calls_to("torch.nn.Embedding"):
            if _has_star(site.node):
                continue
            dims = [self._size(site, "embedding_dim", 1)]
            if tied is None:
                tied = _ties_weights(model)
            if tied:
                dims.insert(0, self._size(site, "num_embeddings", 0))
            yield from self._report_sizes(site, "nn.Embedding", dims)

    def _report_sizes(self, site: CallSite, kind: str, dims: List[Optional[int]]) -> Iterator[Report]:
        bad = [d for d in dims if d is not None and d >= 64 and d % 8]
        if not bad:
            return
        shown = ", ".join(f"{d} (next multiple of 8: {d + 8 - d % 8})" for d in bad)
        yield self.report(
            site.node,
            "`{layer}` size {sizes} under mixed precision: matrix multiplies run well below tensor-core speed",
            data={"layer": kind, "sizes": shown, "dimensions": list(bad)},
        )

    @staticmethod
    def _size(site: CallSite, keyword: str, position: int) -> Optional[int]:
        arg = call_argument(site.node, keyword, position)
        return None if arg is None else literal_int(arg.value)

    @staticmethod
    def _output_layer(model: FileModel, site: CallSite) -> bool:
        name = (site.assigned_to or "").rsplit(".", 1)[-1].lower()
        if "head" in name or "classif" in name or name in _OUTPUT_NAMES:
            return True
        outer = site.outer
        if outer is not None and outer.qualname == "torch.nn.Sequential":
            linears = [
                a.value
                for a in outer.node.args
                if type(a.value) is cst.Call and model.imports.qualify(a.value.func) == "torch.nn.Linear"
            ]
            return bool(linears) and linears[-1] is site.node
        return False

    def _conv_bias(self, model: FileModel) -> Iterator[Report]:
        for sequential in model.calls_to("torch.nn.Sequential"):
            args = sequential.node.args
            for current, following in zip(args, args[1:]):
                if current.star or following.star:
                    continue
                conv, norm = current.value, following.value
                if not type(conv) is cst.Call or not type(norm) is cst.Call:
                    continue
                norms = _CONV_BN.get(model.imports.qualify(conv.func) or "")
                if norms is None or model.imports.qualify(norm.func) not in norms or _has_star(conv) or not conv.args:
                    continue
                bias = call_argument(conv, "bias", 7)
                if bias is not None and literal_bool(bias.value) is not True:
                    continue
                if bias is None:
                    edit = NodeEdit(conv.args[-1].value, ", bias=False", "after")
                else:
                    edit = NodeEdit(bias.value, "False")
                yield self.report(
                    conv,
                    "`{layer}` keeps its bias although the next layer is a BatchNorm, "
                    "which cancels it",
                    fix=FixSpec("pass `bias=False` (changes the state_dict keys)", (edit,), Applicability.UNSAFE),
                    data={"layer": snippet(model, conv.func)},
                )
