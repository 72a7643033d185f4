"""Helpers shared by the sync rules."""

from __future__ import annotations
import re
from typing import Optional
import libcst as cst
from advisor.model import CallSite, FileModel
from advisor.model.names import dotted_name


TRAINING_TEXT = ("backward", ".step(")


def chain_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The start of a method chain: `rewards` in `rewards.mean().item()`."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, (cst.Comparison, cst.BinaryOperation)):
            expr = expr.left  # `(y == 1).sum()`: follow the left operand
        else:
            return expr


def numpy_value(model: FileModel, expr: cst.BaseExpression, site: CallSite, depth: int = 0) -> bool:
    """The value comes from NumPy (`np.asarray(x).mean()`, a name bound to one): no GPU involved."""
    if isinstance(expr, cst.Call):
        qual = model.imports.qualify(expr.func)
        if qual is not None:
            return qual.split(".")[0] == "numpy"
        if isinstance(expr.func, cst.Attribute):
            return numpy_value(model, expr.func.value, site, depth)
        return False
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return numpy_value(model, expr.value, site, depth)
    name = dotted_name(expr)
    if name is None or depth > 3:
        return False
    values = [a.value for a in model.assignments(name, site.ctx) if a.value is not None]
    return bool(values) and all(numpy_value(model, v, site, depth + 1) for v in values)


def raw_batch_value(model: FileModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """Rooted at a DataLoader's loop variable that has not been moved yet: still in host memory."""
    root = chain_root(expr)
    if not isinstance(root, cst.Name):
        return False
    reaching = model.reaching_assignment(root.value, site.ctx, site.order)
    return reaching is not None and reaching.value is None and reaching.kind_hint in ("batch", "loader-batch", "index")


DEVICE_NAME = re.compile(r"(^|_)(device|dev|gpu|gpu_id|local_rank|rank)s?$|^device", re.IGNORECASE)


DTYPE_NAME = re.compile(r"dtype", re.IGNORECASE)


TORCH_DTYPES = frozenset(
    "float16 float32 float64 bfloat16 half float double long int int8 int16 int32 int64 uint8 bool "
    "complex64 complex128 cfloat".split()
)


def is_dtype(model: FileModel, expr: cst.BaseExpression) -> bool:
    qual = model.imports.qualify(expr) or ""
    if qual.startswith("torch.") and qual[len("torch."):] in TORCH_DTYPES:
        return True
    name = dotted_name(expr)
    return name is not None and bool(DTYPE_NAME.search(name.rsplit(".", 1)[-1]))


def string_device(expr: cst.BaseExpression) -> Optional[str]:
    """"cuda" / "cpu" / "other" for a literal device string, None when not a literal."""
    if isinstance(expr, cst.SimpleString):
        text = str(expr.evaluated_value)
        if text.startswith("cuda"):
            return "cuda"
        return "cpu" if text in ("cpu", "meta") else "other"
    if isinstance(expr, cst.FormattedString):
        first = expr.parts[0] if expr.parts else None
        if isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda"):
            return "cuda"
        return "other"
    return None


def device_kind(model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> Optional[str]:
    """"cuda" when the expression names a CUDA (or run-time chosen) device, "host" for the CPU,
    None when it is not known to be a device at all (a dtype, another tensor, ...)."""
    literal = string_device(expr)
    if literal is not None:
        return {"cuda": "cuda", "cpu": "host"}.get(literal)
    if isinstance(expr, cst.Integer):
        return "cuda"
    if isinstance(expr, cst.IfExp):
        body, orelse = device_kind(model, expr.body, ctx, depth + 1), device_kind(model, expr.orelse, ctx, depth + 1)
        return "cuda" if "cuda" in (body, orelse) and None not in (body, orelse) else None
    if isinstance(expr, cst.Call):
        if model.imports.qualify(expr.func) == "torch.device" and expr.args:
            return device_kind(model, expr.args[0].value, ctx, depth + 1) or "cuda"
        return None
    if is_dtype(model, expr):
        return None
    name = dotted_name(expr)
    if name is None:
        return None
    found = [a for a in model.assignments(name, ctx) if a.value is not None and a.index is None]
    if found and depth < 3:
        kinds = {device_kind(model, a.value, a.ctx, depth + 1) for a in found}
        if kinds == {"host"}:
            return "host"
        if "cuda" in kinds:
            return "cuda"
    return "cuda" if DEVICE_NAME.search(name.rsplit(".", 1)[-1]) else None
