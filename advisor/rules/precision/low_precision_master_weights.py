"""GPU304 `low-precision-master-weights`: model cast to fp16/bf16 and trained by a plain `torch.optim` optimizer."""

from __future__ import annotations
from typing import Iterator, List, Optional, Tuple
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, Context, FileModel
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import dotted_name
from advisor.model.walk import children
from advisor.rules.base import Report, Rule
from advisor.rules.precision.dtypes import dtype_of


_CAST_METHODS = {"half": "fp16", "bfloat16": "bf16", "float": "fp32", "double": "fp64"}


def _cast_kind(model: FileModel, call: cst.Call, ctx=None) -> Optional[str]:
    """What a `.half()`, `.bfloat16()`, `.float()` or `.to(dtype)` call casts to (None: not a cast)."""
    if not type(call.func) is cst.Attribute:
        return None
    method = call.func.attr.value
    if method in _CAST_METHODS:
        return None if call.args else _CAST_METHODS[method]
    if method not in ("to", "type"):
        return None
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "dtype":
            kind = dtype_of(model, arg.value, ctx)
            if kind is not None:
                return kind
            if arg.keyword is not None:
                return "unknown"
    return None


def _chain_cast(model: FileModel, expr: Optional[cst.BaseExpression]) -> Optional[Tuple[str, cst.Call]]:
    """The last cast applied in a method chain such as `Net().to(device).half()`."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        kind = _cast_kind(model, expr)
        if kind is not None:
            return kind, expr
        expr = expr.func.value
    return None


def _chain_base(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """`model` for `model.to(device).half()`: the dotted name a method chain starts from."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        expr = expr.func.value
    return dotted_name(expr) if expr is not None else None


def _wraps(expr: cst.BaseExpression, name: str) -> bool:
    """`Wrapper(model, ...)`: a call given the model as its first argument."""
    if type(expr) is not cst.Call or not expr.args:
        return False
    first = expr.args[0]
    return first.keyword is None and not first.star and dotted_name(first.value) == name


def _small_calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    """Calls inside one small subtree (an argument, an assignment value): never a whole file."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Call:
            yield current
        if not type(current) is cst.Lambda:
            stack.extend(children(current))


def _mentions_attribute(node: cst.CSTNode, attr: str) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Attribute and current.attr.value == attr:
            return True
        stack.extend(children(current))
    return False


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
        A model cast with `.half()`, `.bfloat16()` or `.to(torch.float16)` (also `.to(dtype)`
        with `dtype = torch.bfloat16 if torch.cuda.is_available() ... else torch.float32`, the
        arm a CUDA run takes; a wrapper it is handed to, `DDP(model)`, keeps it; directly, or at the
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
    fix_safety = """
        No automatic fix. Keeping float32 weights means removing the cast, adding autocast around
        the forward pass and the loss, and often a GradScaler: a change to several places that
        also doubles the weights' memory.
    """
    references = (
        ("Automatic mixed precision", "https://docs.pytorch.org/docs/stable/amp.html"),
        ("CUDA automatic mixed precision examples", "https://docs.pytorch.org/docs/stable/notes/amp_examples.html"),
        ("torch.finfo: the resolution of each dtype", "https://docs.pytorch.org/docs/stable/type_info.html"),
    )
    requires = (("half", "bfloat16", "float16"), ("optim",), ("backward", ".step("))

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
                    yield self.report(
                        node,
                        "`{model}` is cast to {dtype} and its parameters are trained by "
                        "`{optimizer}` (line {line[optimizer]}): updates below half a 16-bit "
                        "step round away",
                        severity=Severity.INFO if ctx is not site.ctx and ctx.conditional else self.severity,
                        data={"model": name, "dtype": dtype, "optimizer": qualname.rsplit('.', 1)[-1]},
                        related=[(site.node, "optimizer")],
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
                if type(func) is cst.Attribute and func.attr.value in ("parameters", "named_parameters"):
                    base = dotted_name(func.value)
                    if base is not None and base not in names:
                        names.append(base)
        return names

    def _last_cast(self, model: FileModel, name: str, opt: CallSite) -> Optional[Tuple[str, cst.Call, Context]]:
        """The last dtype cast applied to the object ``name`` holds before the optimizer is built."""
        assigned = [a for a in model.assignments(name, opt.ctx) if a.order < opt.order and a.value is not None]
        # A new object (not `model = model.to(...)`) starts a fresh history.
        # A wrapper given the model (`DDP(model)`, `torch.compile(model)`) holds the same weights.
        fresh = [a.order for a in assigned if _chain_base(a.value) != name and not _wraps(a.value, name)]
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
                kind = _cast_kind(model, site.node, site.ctx)
                if kind is not None:
                    events.append((site.order, kind, site.node, site.ctx))
        if not events:
            return None
        _, kind, node, ctx = max(events, key=lambda e: e[0])
        return kind, node, ctx
