"""Where a device expression points: a CUDA device (or one chosen at run time), or the host."""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from advisor.model.builder import ACCELERATOR_DEVICE_CALLS
from advisor.model.facts import Context
from advisor.model.hydra_configs import hydra_values, primary_configs
from advisor.model.names import dotted_name
from advisor.model.value_flow import Question, ValueFlow, argument
from advisor.model.vocabulary import DEVICE_NAME, DTYPE_NAME, TORCH_DTYPES

CUDA, HOST, NOT_A_DEVICE = "cuda", "host", ""
# Plain names that read like a device (`dev`, `gpu`, `local_rank`) rather than a tensor.
_DEVICE_WORD = re.compile(r"dev|gpu|cuda|rank", re.I)


def is_dtype(model, expr: cst.BaseExpression) -> bool:
    """`torch.float16`, or a name that says it holds a dtype."""
    qual = model.imports.qualify(expr) or ""
    if qual.startswith("torch.") and qual[len("torch."):] in TORCH_DTYPES:
        return True
    name = dotted_name(expr)
    return name is not None and bool(DTYPE_NAME.search(name.rsplit(".", 1)[-1]))


def string_device(expr: cst.BaseExpression) -> Optional[str]:
    """"cuda" / "cpu" / "other" for a literal device string, None when not a literal."""
    if type(expr) is cst.SimpleString:
        text = str(expr.evaluated_value)
        if text.startswith("cuda"):
            return "cuda"
        return "cpu" if text in ("cpu", "meta") else "other"
    if type(expr) is cst.FormattedString:
        first = expr.parts[0] if expr.parts else None
        if type(first) is cst.FormattedStringText and first.value.startswith("cuda"):
            return "cuda"
        return "other"
    return None


def _accelerator_type(model, expr: cst.BaseExpression) -> bool:
    return (
        type(expr) is cst.Attribute
        and expr.attr.value == "type"
        and type(expr.value) is cst.Call
        and model.imports.qualify(expr.value.func) in ACCELERATOR_DEVICE_CALLS
    )


class DeviceKind(Question[str]):
    """CUDA when every path that names a device names a CUDA one (or one chosen at run time, as
    `device` names usually are), HOST when every path names the CPU, NOT_A_DEVICE otherwise (a
    dtype, another tensor, nothing known)."""

    key = "device"
    unknown = NOT_A_DEVICE

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[str]:
        literal = string_device(expr)
        if literal is not None:
            return {"cuda": CUDA, "cpu": HOST}.get(literal, NOT_A_DEVICE)
        if type(expr) is cst.Integer:
            return CUDA  # `.to(0)`, `.cuda(1)`
        if type(expr) is cst.Call:
            qualname = flow.model.imports.qualify(expr.func)
            if qualname == "torch.device" and expr.args:
                return flow.ask(self, expr.args[0].value, ctx, order) or CUDA
            # `torch.accelerator.current_accelerator()`: the run's accelerator, CUDA on a GPU box
            return CUDA if qualname in ACCELERATOR_DEVICE_CALLS else NOT_A_DEVICE
        if _accelerator_type(flow.model, expr):
            return CUDA  # `torch.accelerator.current_accelerator().type`: "cuda" on a GPU box
        if is_dtype(flow.model, expr):
            return NOT_A_DEVICE
        return None

    def combine(self, answers: Sequence[str]) -> str:
        if all(a == HOST for a in answers):
            return HOST
        return CUDA if CUDA in answers and NOT_A_DEVICE not in answers else NOT_A_DEVICE

    def refine(self, flow: ValueFlow, expr, ctx: Context, order: int, answer: str) -> str:
        if answer == NOT_A_DEVICE:
            name = dotted_name(expr)
            if name is not None and DEVICE_NAME.search(name.rsplit(".", 1)[-1]):
                # A device setting: the run's choice, a GPU unless the script's config says the host.
                values = hydra_values(flow.model, expr)
                if values is not None and all(v == "cpu" for v in values):
                    return HOST
                return CUDA
        return answer


DEVICE = DeviceKind()


def device_kind(model, expr: cst.BaseExpression, ctx: Context, order: int = 1 << 30) -> Optional[str]:
    """"cuda", "host", or None when the expression is not known to name a device."""
    return model.values.ask(DEVICE, expr, ctx, order) or None


def may_move_to_device(model, call: cst.Call) -> bool:
    """A `.to(...)` call that may send its value to another device: evidence that a script's
    tensors leave the host. Not a dtype or memory-format conversion (`.to(torch.float32)`,
    `.to(x.dtype)`), not a move to the CPU, and not `.to(times)` with a plain name that reads
    like a tensor rather than a device: that follows another value wherever it lives."""
    args = call.args
    if not args:
        return False
    for arg in args:
        if arg.star:
            return True  # `.to(**placement)`: unknown
        if arg.keyword is not None and arg.keyword.value == "device":
            return string_device(arg.value) != "cpu"
    first = args[0]
    if first.keyword is not None:
        return False  # `.to(dtype=...)`, `.to(memory_format=...)`
    value = first.value
    if string_device(value) is not None:
        return string_device(value) != "cpu"
    if is_dtype(model, value):
        return False
    if type(value) is cst.Name:
        return bool(_DEVICE_WORD.search(value.value))
    return True  # `self.device`, `x.device`, `torch.device(...)`, `gpus[0]`


def names_host_device(model, expr: cst.BaseExpression, ctx: Context, order: int) -> bool:
    """A plain name every binding of which, on every path, is the CPU (`loss_device =
    torch.device("cpu")`, `cpu = "cpu"`): no option, parameter or attribute that a run may set
    otherwise. Stricter than `device_kind`, for the findings that say a copy goes to the host."""
    if type(expr) is not cst.Name:
        return False
    reach = model.bindings.reaching(expr.value, ctx, order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return False
    for assignment in reach.assignments:
        value = assignment.value
        if value is None or assignment.index is not None or assignment.augmented:
            return False
        if type(value) is cst.Call and model.imports.qualify(value.func) == "torch.device" and len(value.args) == 1:
            value = value.args[0].value
        if string_device(value) != "cpu":
            return False
    return True


def cuda_tensor_type(model, expr: cst.BaseExpression, call: cst.Call) -> bool:
    """`torch.cuda.FloatTensor`, or a name bound to it on the CUDA path (`Tensor =
    torch.cuda.FloatTensor if cuda else torch.FloatTensor`, the GAN scripts' idiom)."""
    if names_cuda_type(model, expr):
        return True
    if type(expr) is not cst.Name:
        return False
    site = model.site_of(call)
    if site is None:
        return False
    found = model.reaching(expr.value, site.ctx, site.order)
    return any(a.value is not None and names_cuda_type(model, a.value) for a in found)


def names_cuda_type(model, expr: cst.BaseExpression) -> bool:
    """The expression names a CUDA tensor type (in either arm of a conditional expression)."""
    if type(expr) is cst.IfExp:
        return names_cuda_type(model, expr.body) or names_cuda_type(model, expr.orelse)
    return ".cuda." in (model.imports.qualify(expr) or dotted_name(expr) or "")


def on_host_by_config(model) -> bool:
    """The file is a Hydra script that moves its tensors only to the host: some `.to(...)` of
    it names a device setting its primary config gives as `cpu`, and none names any other
    device or a device not known (`.to(dtype)` left aside). Its syncs wait for no GPU, whatever
    the library it imports can do."""
    return model.shared("hydra-host", _on_host_by_config)


def _on_host_by_config(model) -> bool:
    by_config = False
    other = not primary_configs(model)
    for site in () if other else model.facts.calls_by_method.get("to", ()):
        args = site.node.args
        target = next((a.value for a in args if a.keyword is not None and a.keyword.value == "device"), None)
        if target is None and args and args[0].keyword is None:
            target = args[0].value
        if target is None or is_dtype(model, target):
            continue
        if device_kind(model, target, site.ctx, site.order) != HOST:
            other = True
            break
        by_config = by_config or hydra_values(model, target) is not None
    return by_config and not other


def moves_to_device(model, call: cst.Call, ctx: Context, order: int = 1 << 30) -> bool:
    """`.cuda(...)`, or `.to(...)` unless it only changes the dtype or goes to the CPU."""
    method = call.func.attr.value if type(call.func) is cst.Attribute else None
    if method == "cuda":
        return True
    if method != "to":
        return False
    target = argument(call, "device", 0)
    if target is None or is_dtype(model, target.value):
        return False
    return device_kind(model, target.value, ctx, order) != HOST
