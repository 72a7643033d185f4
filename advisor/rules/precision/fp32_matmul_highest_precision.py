"""GPU305 `fp32-matmul-highest-precision`: CUDA training entirely in float32 with TF32 matmuls left off."""

from __future__ import annotations
import re
from typing import Iterator, Optional
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.names import GRAD_SCALER, dotted_name
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.rules.precision.dtypes import LOW_PRECISION, dtype_of
from advisor.model.vocabulary import CUDA_TEXT


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
        if type(small) is cst.Import:
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
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix inserts `torch.set_float32_matmul_precision("high")` after the last module-level
        import. Always offered as unsafe: float32 matrix products then run in TF32, with about
        10 bits of mantissa, so results change, and the setting is global: it applies to every
        library the process runs, evaluation included.

        Not offered when torch is imported under another name, when there is no module-level
        import to follow, or when the last import line carries a comment.
    """
    references = (
        (
            "CUDA semantics: TensorFloat-32 (TF32) on Ampere (and later) devices",
            "https://docs.pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices",
        ),
        (
            "torch.set_float32_matmul_precision",
            "https://docs.pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html",
        ),
        (
            "Performance Tuning Guide: enable Tensor cores",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-tensor-cores",
        ),
    )
    requires = (CUDA_TEXT, ("backward", ".step("))

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
                    if dtype_of(model, arg.value) in ("fp16", "bf16"):
                        return True
        return False

    @staticmethod
    def _names_low_precision(model: FileModel, value: cst.BaseExpression) -> bool:
        """A value that is, or chooses between, 16-bit dtypes (a conditional or a table)."""
        candidates = [value]
        if type(value) is cst.Subscript:
            value = value.value  # `{"fp32": torch.float32, "bf16": torch.bfloat16}[cfg.dtype]`
        if type(value) is cst.IfExp:
            candidates = [value.body, value.orelse]
        elif type(value) is cst.Dict:
            candidates = [e.value for e in value.elements if type(e) is cst.DictElement]
        return any(
            LOW_PRECISION.get(model.imports.qualify(c) or "") in ("fp16", "bf16") for c in candidates
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
        if not type(last) is cst.SimpleStatementLine or last.trailing_whitespace.comment is not None:
            return None
        newline = model.module.default_newline
        return FixSpec(
            f"add `{_SET_PRECISION}` after the imports",
            (NodeEdit(last, f"{newline}{_SET_PRECISION}", "after"),),
            Applicability.UNSAFE,
        )
