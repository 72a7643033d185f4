"""Whether an `if` test holds exactly when the program runs on a GPU: `use_cuda`,
`torch.cuda.is_available()`, `args.device == "cuda"`, `device.type != "cpu"`, `not args.no_cuda`;
or exactly off it: `x.device.type == "mps"`, `is_mps`.

Settings added under such a test (`if use_cuda: kwargs.update(pin_memory=True)`) are those of
the CUDA path, which is the path the input-pipeline rules judge.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from advisor.model.names import dotted_name

# Names that say "on the GPU" (True) or "on the CPU" (False) when they are true.
# A bare `gpu` is usually a device index (0 is false): not a flag.
# `accel` / `use_accel` / `no_accel` are the flags of `torch.accelerator` scripts (not `accelerator`,
# which names an Accelerate object, nor `use_accelerate`).
_GPU_FLAG = re.compile(
    r"^((use_|with_|on_|has_|is_|enable_)?cuda(_available|_enabled)?|(use_|with_|on_|has_|enable_)gpus?"
    r"|(use_|with_|enable_)?accel|(use_|with_|enable_)accelerator)$",
    re.IGNORECASE,
)
_CPU_FLAG = re.compile(
    r"^(no_(cuda|gpu|accel|accelerator)|use_cpu|cpu|cpu_only|force_cpu"
    r"|(\w+_)?(is_|use_|on_)(mps|xla|tpu|xpu|npu|hpu))$",  # `x_is_mps`: another device than CUDA
    re.IGNORECASE,
)
# Device types other than CUDA's: a test that one is in use holds off the CUDA path.
_OTHER_DEVICES = frozenset({"cpu", "mps", "xla", "xpu", "npu", "hpu", "meta"})
_AVAILABILITY = ("torch.cuda.is_available", "torch.accelerator.is_available")


def cuda_test(model, test: cst.BaseExpression) -> Optional[bool]:
    """True when the test holds exactly on the GPU path, False when exactly on the CPU path,
    None when it says nothing about it (or more than it: `use_cuda and args.pin`)."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = cuda_test(model, test.expression)
        return None if inner is None else not inner
    if type(test) is cst.BooleanOperation:
        left, right = cuda_test(model, test.left), cuda_test(model, test.right)
        # `args.cuda and torch.cuda.is_available()`: both say the same, so the whole does.
        return left if left is not None and left == right else None
    if type(test) is cst.Call:
        return True if model.imports.qualify(test.func) in _AVAILABILITY else None
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        other = _other_backend_present(test)
        return other if other is not None else _device_comparison(test)
    name = dotted_name(test)
    if name is None:
        return None
    last = name.rsplit(".", 1)[-1]
    if _GPU_FLAG.match(last):
        return True
    if _CPU_FLAG.match(last):
        return False
    return None


_OTHER_BACKEND = re.compile(r"(^|_)(npu|xla|xpu|hpu|mps)($|_)", re.IGNORECASE)


def _other_backend_present(test: cst.Comparison) -> Optional[bool]:
    """`torch_npu is not None`: another accelerator's package was imported, so the branch is
    that accelerator's (False: off the CUDA path). `is None` says nothing: the run may still
    be on the CPU."""
    target = test.comparisons[0]
    if type(target.operator) not in (cst.Is, cst.IsNot):
        return None
    if not (type(target.comparator) is cst.Name and target.comparator.value == "None"):
        return None
    name = dotted_name(test.left)
    if name is None or not _OTHER_BACKEND.search(name.rsplit(".", 1)[-1]):
        return None
    return False if type(target.operator) is cst.IsNot else None


def _device_comparison(test: cst.Comparison) -> Optional[bool]:
    """`device == "cuda"`, `args.device != "cpu"`, `device.type == "cuda"`, `"cuda" in device`,
    `boxes.device == torch.device("cpu")`."""
    target = test.comparisons[0]
    operator = target.operator
    left, right = test.left, target.comparator
    if type(operator) in (cst.In, cst.NotIn):
        text, other, negated = _text(left), right, type(operator) is cst.NotIn
    elif type(operator) in (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot):
        negated = type(operator) in (cst.NotEqual, cst.IsNot)
        text, other = (_text(right), left) if _text(right) is not None else (_text(left), right)
    else:
        return None
    if text is None or not _names_a_device(other):
        return None
    if text.startswith("cuda"):
        holds = True
    elif text in _OTHER_DEVICES:
        holds = False  # `x.device.type == "mps"`: the branch for Apple's GPU
    else:
        return None
    return (not holds) if negated else holds


def _text(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Call and len(expr.args) == 1 and dotted_name(expr.func) in ("torch.device", "device"):
        expr = expr.args[0].value  # `boxes.device == torch.device("cpu")`
    if type(expr) is cst.SimpleString:
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _names_a_device(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "str" and expr.args:
        expr = expr.args[0].value  # `"cuda" in str(device)`
    name = dotted_name(expr)
    return name is not None and "device" in name.lower()
