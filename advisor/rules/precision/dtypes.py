"""Helpers shared by the precision rules."""

from __future__ import annotations
from typing import Optional
import libcst as cst
from advisor.model import FileModel
from advisor.model.facts import MODULE_SCOPE, AutocastSite
from advisor.model.cuda_tests import cuda_test
from advisor.model.names import dotted_name


def autocast_dtype(model: FileModel, expr: cst.BaseExpression, site: AutocastSite, depth: int = 0) -> Optional[str]:
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
    kinds = {autocast_dtype(model, a.value, site, depth + 1) if a.value is not None else None for a in found}
    return kinds.pop() if len(kinds) == 1 else None


def autocast_device(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if type(expr) is cst.SimpleString:
        value = expr.evaluated_value
        if isinstance(value, str):
            return value.split(":")[0]
    return None


LOW_PRECISION = {"torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float32": "fp32", "torch.float64": "fp64"}


def spelled_name(model: FileModel, func: cst.BaseExpression) -> Optional[str]:
    """The imported name as written (`torch.cuda.amp.GradScaler`), before canonical merging."""
    dotted = dotted_name(func)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    target = model.imports.aliases.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def dtype_of(model: FileModel, expr: cst.BaseExpression, ctx=None, depth: int = 0) -> Optional[str]:
    """A torch dtype, also through a module-level constant (`DTYPE = torch.float16`), or with
    ``ctx`` a name bound where it is read; of a conditional expression that tests for CUDA
    (`torch.bfloat16 if torch.cuda.is_available() and ... else torch.float32`), the dtype of
    the arm a CUDA run takes."""
    kind = LOW_PRECISION.get(model.imports.qualify(expr) or "")
    if kind is not None or depth > 3:
        return kind
    if type(expr) is cst.IfExp:
        arm = _cuda_arm(model, expr)
        return None if arm is None else dtype_of(model, arm, ctx, depth + 1)
    if type(expr) is cst.Name:
        if ctx is not None:
            found = model.assignments(expr.value, ctx)
        else:
            found = model.facts.assignments.get((MODULE_SCOPE, expr.value), ())
        kinds = {dtype_of(model, a.value, None, depth + 1) if a.value is not None and a.index is None else None
                 for a in found}
        if len(kinds) == 1:
            return kinds.pop()
    return None


def _cuda_arm(model: FileModel, choice: cst.IfExp) -> Optional[cst.BaseExpression]:
    """The arm of ``choice`` a CUDA run takes, when its test is a CUDA test or an `and` of
    conditions one of which is (`torch.cuda.is_available() and torch.cuda.is_bf16_supported()`)."""
    parts = []
    stack = [choice.test]
    while stack:
        node = stack.pop()
        if type(node) is cst.BooleanOperation and type(node.operator) is cst.And:
            stack.extend((node.left, node.right))
        else:
            parts.append(cuda_test(model, node))
    if True in parts and False not in parts:
        return choice.body
    if parts == [False]:
        return choice.orelse
    return None
