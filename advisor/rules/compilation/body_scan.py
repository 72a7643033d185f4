"""What a function body does, op by op, as the compilation rules count it: pointwise kernels,
heavy kernels, and the values that are not tensors."""

from __future__ import annotations
from typing import Dict, Set
import libcst as cst
from advisor.model import FileModel
from advisor.model.facts import FunctionInfo
from advisor.model.names import dotted_name, root_name
from advisor.model.walk import Walker


# Pointwise ops: each one is a kernel that reads and writes whole tensors in eager mode.
POINTWISE = frozenset(
    """abs absolute add sub subtract mul multiply div divide true_divide neg negative exp exp2 expm1
    log log1p log2 log10 sqrt rsqrt pow square sigmoid tanh relu clamp clamp_min clamp_max clip where
    sin cos tan sinh cosh asin acos atan atan2 erf erfc erfinv reciprocal sign sgn maximum minimum
    lerp addcmul addcdiv floor ceil round trunc frac logit nan_to_num masked_fill fmod remainder
    hypot xlogy logical_and logical_or logical_not logical_xor eq ne lt le gt ge isnan isinf""".split()
)


F_POINTWISE = frozenset(
    """relu relu6 leaky_relu elu selu celu softplus softsign sigmoid tanh hardtanh hardsigmoid
    logsigmoid threshold dropout""".split()
)


# Calls that do the heavy lifting in one kernel of their own (or a module doing so).
HEAVY_TORCH = frozenset(
    """matmul mm bmm baddbmm addmm einsum softmax log_softmax layer_norm group_norm batch_norm conv1d
    conv2d conv3d embedding cdist topk sort cumsum""".split()
)


NON_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "training", "layout"})


NON_TENSOR_METHODS = frozenset(
    """size dim numel nelement item tolist numpy stride data_ptr element_size is_contiguous
    get_device is_floating_point __len__ storage_offset""".split()
)


VIEW_ATTRS = frozenset({"T", "mT", "H", "real", "imag", "data", "grad"})


TENSOR_NAMESPACES = ("torch", "torch.linalg", "torch.special", "torch.fft", "torch.nn.functional")


ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
    cst.BitAnd, cst.BitOr, cst.BitXor,
)


PLAIN_ANNOTATIONS = frozenset({"int", "float", "bool", "str"})


class BodyScan(Walker):
    """What one function body computes: pointwise ops on tensors, heavy calls, tensor names.

    Parameters are assumed to be tensors (``weak``: a bare parameter is not trusted as a tensor
    in a test, only once a tensor method or torch function is applied to it)."""

    def __init__(self, model: FileModel, info: FunctionInfo) -> None:
        super().__init__()
        self.model = model
        self.info = info
        self.pointwise = 0
        self.heavy = 0
        self.names: Dict[str, str] = {}  # name -> "param" | "derived"
        self._self_tensors = self._class_tensors() if info.class_name else set()
        params = info.node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            name = param.name.value
            if name in ("self", "cls"):
                continue
            if param.default is not None and not (type(param.default) is cst.Name and param.default.value == "None"):
                continue  # `scale=1.0`, `causal=False`: plain values
            annotation = param.annotation
            if annotation is not None and dotted_name(annotation.annotation) in PLAIN_ANNOTATIONS:
                continue
            self.names[name] = "param"

    def _class_tensors(self) -> Set[str]:
        """`self.weight = nn.Parameter(...)`, `self.register_buffer("mask", ...)`."""
        out: Set[str] = set()
        scope = f"class:{self.info.class_name}"
        for (key_scope, target), found in self.model.facts.assignments.items():
            if key_scope != scope:
                continue
            for assignment in found:
                value = assignment.value
                if type(value) is cst.Call:
                    qual = self.model.imports.qualify(value.func) or ""
                    if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") or (
                        qual.rpartition(".")[0] == "torch" and qual.rsplit(".", 1)[-1][:1].islower()
                    ):
                        out.add(target)
        for site in self.model.method_calls("register_buffer", "register_parameter"):
            if site.ctx.class_name == self.info.class_name and site.receiver_name == "self" and site.node.args:
                first = site.node.args[0].value
                if type(first) is cst.SimpleString and isinstance(first.evaluated_value, str):
                    out.add("self." + first.evaluated_value)
        return out

    # -- what an expression is ----------------------------------------------------------------
    def tensorish(self, expr: cst.BaseExpression, strict: bool = False) -> bool:
        if type(expr) is cst.Name:
            kind = self.names.get(expr.value)
            return kind == "derived" or (kind == "param" and not strict)
        if type(expr) is cst.Attribute:
            attr = expr.attr.value
            if attr in NON_TENSOR_ATTRS:
                return False
            if attr in VIEW_ATTRS:
                return self.tensorish(expr.value, strict)
            return dotted_name(expr) in self._self_tensors
        if type(expr) is cst.Subscript:
            return self.tensorish(expr.value, strict)
        if type(expr) is cst.Call:
            return self._call_tensorish(expr)
        if type(expr) is cst.BinaryOperation:
            if type(expr.operator) is cst.MatrixMultiply:
                return True
            return self.tensorish(expr.left, strict) or self.tensorish(expr.right, strict)
        if type(expr) is cst.UnaryOperation and not type(expr.operator) is cst.Not:
            return self.tensorish(expr.expression, strict)
        if type(expr) is cst.Comparison:
            if any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in expr.comparisons):
                return False
            return self.tensorish(expr.left, strict) or any(self.tensorish(c.comparator, strict) for c in expr.comparisons)
        if type(expr) is cst.IfExp:
            return self.tensorish(expr.body, strict) or self.tensorish(expr.orelse, strict)
        return False

    def _call_tensorish(self, call: cst.Call) -> bool:
        func = call.func
        qual = self.model.imports.qualify(func)
        if qual is not None:
            head, _, last = qual.rpartition(".")
            return head in TENSOR_NAMESPACES and last[:1].islower()
        if type(func) is cst.Attribute:
            if dotted_name(func.value) == "self":
                return True  # a submodule (or a helper of the module) returns a tensor
            if func.attr.value in NON_TENSOR_METHODS:
                return False
            return self.tensorish(func.value)
        return False

    # -- traversal ------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _bind(self, target: cst.BaseExpression) -> None:
        if type(target) is cst.Name:
            self.names[target.value] = "derived"
        elif type(target) in (cst.Tuple, cst.List):
            for element in target.elements:
                self._bind(element.value)
        elif type(target) is cst.StarredElement:
            self._bind(target.value)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        if self.tensorish(original_node.value):
            for target in original_node.targets:
                self._bind(target.target)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        if original_node.value is not None and self.tensorish(original_node.value):
            self._bind(original_node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.tensorish(node.target) or self.tensorish(node.value):
            if not type(node.operator) is cst.MatrixMultiplyAssign:
                self.pointwise += 1
            self._bind(node.target)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.MatrixMultiply:
            self.heavy += 1
        elif isinstance(node.operator, ARITHMETIC) and (self.tensorish(node.left) or self.tensorish(node.right)):
            self.pointwise += 1

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self.tensorish(node):
            self.pointwise += 1

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if type(node.operator) in (cst.Minus, cst.BitInvert) and self.tensorish(node.expression):
            self.pointwise += 1

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qual = self.model.imports.qualify(func)
        if qual is not None:
            head, _, last = qual.rpartition(".")
            if head == "torch.nn.functional":
                if last in F_POINTWISE:
                    self.pointwise += 1
                else:
                    self.heavy += 1  # linear, layer_norm, gelu, scaled_dot_product_attention, ...
            elif head in TENSOR_NAMESPACES:
                if last in POINTWISE:
                    self.pointwise += 1
                elif last in HEAVY_TORCH or head != "torch":
                    self.heavy += 1
            return
        if type(func) is cst.Attribute:
            method = func.attr.value
            if dotted_name(func.value) == "self" or (
                type(func.value) is cst.Attribute and root_name(func.value) == "self"
            ):
                self.heavy += 1  # `self.fc1(x)`, `self.blocks.layer(x)`: a submodule or helper
                return
            base = method[:-1] if method.endswith("_") and not method.startswith("_") else method
            if self.tensorish(func.value):
                if base in POINTWISE:
                    self.pointwise += 1
                elif base in HEAVY_TORCH:
                    self.heavy += 1
            return
        if type(func) is cst.Name and func.value not in BUILTINS:
            self.heavy += 1  # `block(x)` in `for block in self.blocks`, a helper


BUILTINS = frozenset(
    """len range isinstance int float bool str tuple list dict zip enumerate min max sum abs round
    getattr hasattr print super any all sorted reversed type iter next map filter""".split()
)


def scan_body(model: FileModel, info: FunctionInfo) -> BodyScan:
    scan = BodyScan(model, info)
    scan.walk(info.node.body)
    return scan
