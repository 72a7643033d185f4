"""GPU704 `cudnn-benchmark-off`: convolution net trained on CUDA without `torch.backends.cudnn.benchmark = True`."""

from __future__ import annotations
from typing import Iterator, List, Optional
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import DATALOADER
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.rules.compilation.compile_facts import trains_somewhere
from advisor.model.vocabulary import CUDA_TEXT


_TRAINING_TEXT = ("backward", ".step(")


_CONV_LAYERS = ("torch.nn.Conv2d", "torch.nn.Conv3d", "torch.nn.ConvTranspose2d", "torch.nn.ConvTranspose3d")


_CUDNN = "torch.backends.cudnn"


_VARIABLE_SHAPES = (
    "torch.nn.utils.rnn.pad_sequence",
    "torch.nn.utils.rnn.pack_padded_sequence",
    "torch.nn.utils.rnn.pack_sequence",
)


_NOT_BUILDERS = frozenset({"get_weight", "get_model_weights", "list_models", "get_model_builder"})


def _qualify_dotted(model: FileModel, dotted: str) -> Optional[str]:
    head, _, rest = dotted.partition(".")
    target = model.imports.aliases.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def _torchvision_builders(model: FileModel) -> List[CallSite]:
    out = []
    for qual, sites in model.facts.calls_by_qualname.items():
        if not qual.startswith("torchvision.models."):
            continue
        parts = qual.split(".")
        last = parts[-1]
        if any(p in ("detection", "optical_flow", "quantization") for p in parts) or last in _NOT_BUILDERS:
            continue
        if last[:1].islower():
            out.extend(sites)
    return out


def _after_imports_fix(model: FileModel, line: str) -> Optional[FixSpec]:
    """Insert ``line`` after the last top-level import statement (torch must be imported as `torch`)."""
    if model.imports.aliases.get("torch") != "torch":
        return None
    imports = {id(node) for node in model.facts.module_imports}
    body = list(model.module.body)
    last = None
    for index, statement in enumerate(body):
        if id(statement) in imports:
            last = index
    if last is None:
        return None
    anchor = body[last]
    if type(anchor) is cst.SimpleStatementLine and anchor.trailing_whitespace.comment is None:
        edit = NodeEdit(anchor, model.module.default_newline + line, "after")
    elif last + 1 < len(body):
        edit = NodeEdit(body[last + 1], line, "line_before")
    else:
        return None
    return FixSpec(f"set `{line}` after the imports", (edit,), Applicability.UNSAFE)


class CudnnBenchmarkOff(Rule):
    code = "GPU704"
    name = "cudnn-benchmark-off"
    severity = Severity.INFO
    summary = "convolution net trained on CUDA without `torch.backends.cudnn.benchmark = True`"
    what = """
        A file that builds 2-D or 3-D convolution layers (`nn.Conv2d`, `nn.Conv3d`, their
        transposed forms, or a torchvision classification model such as
        `torchvision.models.resnet50()`), trains on CUDA, and never sets
        `torch.backends.cudnn.benchmark` (any spelling, `import torch.backends.cudnn as cudnn`
        included). Not reported when the file asks for determinism
        (`cudnn.deterministic`, `torch.use_deterministic_algorithms`), disables cuDNN, or shows
        signs of variable input sizes (a custom `collate_fn`, `pad_sequence`, detection models).
    """
    why = """
        For each convolution shape cuDNN has several algorithms whose speed differs by large
        factors. With benchmark mode on, the first call of each shape times them and keeps the
        fastest; with it off, cuDNN picks by heuristics. When input sizes are fixed, the search
        runs once and every later step benefits; the usual gain is 10-30% of step time on
        convolution-heavy models.
    """
    example = """
        import torch
        import torchvision

        model = torchvision.models.resnet50().cuda()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
    """
    instead = """
        import torch
        import torchvision
        torch.backends.cudnn.benchmark = True  # input sizes are fixed

        model = torchvision.models.resnet50().cuda()
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
    """
    hint = "set `torch.backends.cudnn.benchmark = True` once at start-up when input sizes do not change"
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix inserts `torch.backends.cudnn.benchmark = True` after the last module-level
        import. Always offered as unsafe: cuDNN may then pick a different convolution algorithm
        from run to run, so results stop being bitwise reproducible; each new input shape pays a
        search, which costs more than it saves when shapes keep changing; and some algorithms use
        more workspace memory.

        Not offered when torch is imported under another name or there is no module-level import
        to follow.
    """
    references = (
        (
            "Performance Tuning Guide: enable cuDNN auto-tuner",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-cudnn-auto-tuner",
        ),
        (
            "torch.backends.cudnn.benchmark",
            "https://docs.pytorch.org/docs/stable/backends.html#torch.backends.cudnn.benchmark",
        ),
        (
            "Reproducibility: CUDA convolution benchmarking",
            "https://docs.pytorch.org/docs/stable/notes/randomness.html#cuda-convolution-benchmarking",
        ),
    )
    requires = (("Conv", "torchvision"), CUDA_TEXT, _TRAINING_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.uses_cuda:
            return
        convs = model.calls_to(*_CONV_LAYERS) + _torchvision_builders(model)
        if not convs or not trains_somewhere(model) or self._decided(model) or self._variable_shapes(model):
            return
        first = min(convs, key=lambda s: s.order)
        yield self.report(
            first.node,
            "convolutions trained on CUDA with cuDNN autotuning off: `torch.backends.cudnn.benchmark` is never set",
            fix=_after_imports_fix(model, "torch.backends.cudnn.benchmark = True"),
        )

    @staticmethod
    def _decided(model: FileModel) -> bool:
        """The file sets benchmark itself, asks for determinism, or turns cuDNN off."""
        for (_, target), found in model.facts.assignments.items():
            if not target.endswith(("benchmark", "deterministic", "enabled")):
                continue
            qual = _qualify_dotted(model, target)
            values = {literal_bool(a.value) if a.value is not None else None for a in found}
            if qual == f"{_CUDNN}.benchmark":
                return True
            if qual == f"{_CUDNN}.deterministic" and values != {False}:
                return True
            if qual == f"{_CUDNN}.enabled" and values != {True}:
                return True
        if model.calls_to("torch.use_deterministic_algorithms", f"{_CUDNN}.flags"):
            return True
        for site in model.facts.calls_by_callee.get("setattr", ()):
            args = site.node.args
            if args and model.imports.qualify(args[0].value) == _CUDNN:
                return True
        return False

    @staticmethod
    def _variable_shapes(model: FileModel) -> bool:
        if model.calls_to(*_VARIABLE_SHAPES):
            return True
        for site in model.calls_to(DATALOADER):
            if call_argument(site.node, "collate_fn", None) is not None:
                return True
        return any(".detection." in q for q in model.facts.calls_by_qualname)
