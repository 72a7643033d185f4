"""Compilation, cuDNN autotuning, debug switches and kernel-shape knobs (GPU7xx).

Most facts come from the model. Two questions the model does not answer are computed here on
small subtrees only: what a `forward` body computes (one method's body), and which `if` tests
enclose a call (the body of the function or loop around it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.findings import Applicability, Severity
from advisor.model import CallSite, FileModel
from advisor.model.facts import MODULE_SCOPE, Context, FunctionInfo, LoopInfo
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import DATALOADER, DDP_WRAPPERS, GRAD_SCALER, dotted_name, root_name
from advisor.model.walk import Walker, children
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule, snippet

_TRAINING_TEXT = ("backward", ".step(")
_COMPILE = frozenset({"torch.compile", "torch.compiler.compile"})
_JIT = frozenset({"torch.jit.script", "torch.jit.trace"})
_PARTIAL = frozenset({"functools.partial"})
_NN_MODULE = "torch.nn.Module"
# Methods that return the module they are called on (`Net().cuda()`, `model.to(device)`).
_SAME_OBJECT_METHODS = frozenset({"to", "cuda", "half", "float", "bfloat16", "train", "eval", "cpu", "requires_grad_"})


# -- shared: what the file compiles ------------------------------------------------------------


@dataclass
class _CompileFacts:
    compiled_functions: Set[str] = field(default_factory=set)  # function keys traced by torch.compile
    compiled_classes: Set[str] = field(default_factory=set)  # classes whose forward torch.compile traces
    fused_classes: Set[str] = field(default_factory=set)  # compiled or scripted (torch.jit) classes
    unresolved_module_compile: bool = False  # a model of unknown class is compiled or scripted
    decorator_calls: Set[int] = field(default_factory=set)  # ids of `@torch.compile(...)` Call nodes
    aliases: Set[str] = field(default_factory=set)  # module-level names bound to torch.compile




def _is_compile_expr(model: FileModel, expr: cst.BaseExpression, aliases: Set[str]) -> bool:
    """`torch.compile`, an alias of it, `torch.compile(mode=...)` (a decorator factory) or
    `functools.partial(torch.compile, ...)`."""
    if isinstance(expr, cst.Call):
        qual = model.imports.qualify(expr.func)
        if qual in _PARTIAL and expr.args:
            return _is_compile_expr(model, expr.args[0].value, aliases)
        positional = [a for a in expr.args if a.keyword is None and not a.star]
        return not positional and _is_compile_expr(model, expr.func, aliases)
    return model.imports.qualify(expr) in _COMPILE or (dotted_name(expr) or "") in aliases


def _compile_aliases(model: FileModel) -> Set[str]:
    aliases: Set[str] = set()
    for (scope, target), found in model.facts.assignments.items():
        if scope != MODULE_SCOPE or "." in target:
            continue
        values = [a.value for a in found if a.value is not None and a.index is None]
        if values and all(_is_compile_expr(model, v, set()) for v in values):
            aliases.add(target)
    return aliases


def _decorated_with(model: FileModel, info: FunctionInfo, aliases: Set[str]) -> bool:
    return any(_is_compile_expr(model, d.decorator, aliases) for d in info.node.decorators)


def _disabled(info: FunctionInfo) -> bool:
    """`@torch.compiler.disable` / `@torch._dynamo.disable`: meant to run eagerly."""
    return any(d.rsplit(".", 1)[-1] == "disable" for d in info.decorators)


def _first_argument(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    arg = call_argument(call, keyword, 0)
    return None if arg is None else arg.value


def instance_classes(
    model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0
) -> Optional[Set[str]]:
    """The classes of this file an expression (read at ``order``) holds an instance of; None
    when unknown."""
    if depth > 8:
        return None
    classes = model.facts.classes
    if isinstance(expr, cst.Call):
        func = expr.func
        qual = model.imports.qualify(func)
        if qual is None and isinstance(func, cst.Name) and func.value in classes:
            return {func.value}
        if qual in _COMPILE or qual in _JIT or qual in DDP_WRAPPERS:
            inner = _first_argument(expr, "model" if qual in _COMPILE else "module")
            return None if inner is None else instance_classes(model, inner, ctx, order, depth + 1)
        if qual is None and isinstance(func, cst.Attribute) and func.attr.value in _SAME_OBJECT_METHODS:
            return instance_classes(model, func.value, ctx, order, depth + 1)
        if qual in _CONTAINERS:
            return _constructed_classes(model, expr)
        if qual is not None and qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper():
            return set()  # a torch.nn layer: holds none of this file's classes
        if qual is None and isinstance(func, cst.Name) and func.value in model.facts.functions:
            info = model.facts.functions[func.value]
            body_ctx = Context(function=info, class_name=info.class_name)
            found: Set[str] = set()
            for value in info.returns:
                inner = instance_classes(model, value, body_ctx, 1 << 30, depth + 1)
                if inner is None:
                    return None
                found |= inner
            return found or None
        return None
    name = dotted_name(expr)
    if name is None:
        return None
    assignments = model.assignments(name, ctx)
    local = [a for a in assignments if a.ctx.function is ctx.function and a.order < order]
    candidates = local[-1:] or [a for a in assignments if a.ctx.function is not ctx.function]
    if not candidates:
        return _parameter_classes(model, name, ctx, depth)
    found = set()
    for assignment in candidates:
        if assignment.value is None or assignment.index is not None:
            return None
        inner = instance_classes(model, assignment.value, assignment.ctx, assignment.order, depth + 1)
        if inner is None:
            return None
        found |= inner
    return found


_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})


def _constructed_classes(model: FileModel, call: cst.Call) -> Set[str]:
    """Classes of this file built in a container's arguments (a small subtree)."""
    out: Set[str] = set()
    stack: List[cst.CSTNode] = [call]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in model.facts.classes:
            out.add(node.func.value)
        stack.extend(children(node))
    return out


def _parameter_classes(model: FileModel, name: str, ctx: Context, depth: int) -> Optional[Set[str]]:
    """A parameter: the classes every caller passes."""
    info = ctx.function
    if info is None or name not in info.params:
        return None
    position = info.params.index(name) - (1 if info.class_name is not None else 0)
    sites = model.call_sites(info)
    if not sites:
        return None
    found: Set[str] = set()
    for site in sites:
        arg = call_argument(site.node, name, position)
        inner = None if arg is None else instance_classes(model, arg.value, site.ctx, site.order, depth + 1)
        if inner is None:
            return None
        found |= inner
    return found


def _class_closure(model: FileModel, roots: Set[str]) -> Set[str]:
    """The classes whose code runs when a module of a root class runs: its submodules (classes
    of this file built in its methods) and its base classes of this file."""
    contains: Dict[str, Set[str]] = {}
    for site in model.facts.calls:
        owner = site.ctx.class_name
        func = site.node.func
        if owner and isinstance(func, cst.Name) and func.value in model.facts.classes and site.qualname is None:
            contains.setdefault(owner, set()).add(func.value)
    out: Set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in out or name not in model.facts.classes:
            continue
        out.add(name)
        stack.extend(contains.get(name, ()))
        stack.extend(b for b in model.facts.classes[name].bases if b in model.facts.classes)
    return out


def compile_facts(model: FileModel) -> _CompileFacts:
    """What the file compiles; computed once per file and shared by the GPU70x rules."""
    return model.shared("compilation", _compute_compile_facts)


def _compute_compile_facts(model: FileModel) -> _CompileFacts:
    facts = _CompileFacts(aliases=_compile_aliases(model))
    for info in model.facts.functions.values():
        for decorator in info.node.decorators:
            if isinstance(decorator.decorator, cst.Call):
                facts.decorator_calls.add(id(decorator.decorator))
        if _decorated_with(model, info, facts.aliases):
            facts.compiled_functions.add(info.key)
    precise: Set[str] = set()
    fused: Set[str] = set()
    sites = [s for s in model.calls_to(*_COMPILE, *_JIT) if id(s.node) not in facts.decorator_calls]
    for site in sites:
        is_compile = site.qualname in _COMPILE
        target = _first_argument(site.node, "model" if is_compile else "obj")
        if target is None:
            continue  # `torch.compile(mode=...)`: a decorator factory
        function = _function_named(model, target, site.ctx)
        if function is not None:
            if is_compile:
                facts.compiled_functions.add(function.key)
            continue
        classes = instance_classes(model, target, site.ctx, site.order)
        if classes is None:
            facts.unresolved_module_compile = True
            continue
        fused |= classes
        if is_compile:
            precise |= classes
    for site in model.method_calls("compile"):
        if site.qualname is not None or site.receiver is None:
            continue  # `re.compile(...)`
        classes = instance_classes(model, site.receiver, site.ctx, site.order)
        if classes is None:
            facts.unresolved_module_compile = True
        else:
            precise |= classes
            fused |= classes
    facts.compiled_classes = _class_closure(model, precise)
    facts.fused_classes = _class_closure(model, fused)
    # Dynamo also traces the modules a compiled function calls: `model(x)` in a compiled step.
    called: Set[str] = set()
    traced = _traced_functions(model, facts)
    for site in model.facts.calls:
        function = site.ctx.function
        if function is None or function.key not in traced or site.qualname is not None:
            continue
        func = site.node.func
        if isinstance(func, cst.Name):
            if func.value in _BUILTINS or func.value in model.facts.functions or func.value in model.facts.classes:
                continue
        elif isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and function.class_name:
            if function.class_name in facts.compiled_classes:
                continue  # submodules of a compiled class are in the closure already
            if f"{function.class_name}.{func.attr.value}" in model.facts.functions:
                continue
        else:
            continue
        classes = instance_classes(model, func, site.ctx, site.order)
        if classes is None:
            facts.unresolved_module_compile = True
        else:
            called |= classes
    if called:
        facts.compiled_classes |= _class_closure(model, called)
        facts.fused_classes |= _class_closure(model, called)
    return facts


def _function_named(model: FileModel, expr: cst.BaseExpression, ctx: Context) -> Optional[FunctionInfo]:
    """`torch.compile(train_step)` / `torch.compile(self.step)`: a function of this file."""
    if isinstance(expr, cst.Name) and model.imports.qualify(expr) is None:
        info = model.facts.functions.get(expr.value)
        if info is not None and info.class_name is None:
            # A name that is also assigned a model is not the function.
            if not model.assignments(expr.value, ctx):
                return info
        return None
    if isinstance(expr, cst.Attribute) and dotted_name(expr.value) == "self" and ctx.class_name:
        return model.facts.functions.get(f"{ctx.class_name}.{expr.attr.value}")
    return None


def _traced_functions(model: FileModel, facts: _CompileFacts) -> Dict[str, str]:
    """Function keys that run inside a compiled graph, mapped to the compiled entry point."""
    out: Dict[str, str] = {}
    stack: List[Tuple[str, str]] = [(key, key) for key in sorted(facts.compiled_functions)]
    for name in sorted(facts.compiled_classes):
        if f"{name}.forward" in model.facts.functions:
            stack.append((f"{name}.forward", f"{name}.forward"))
    while stack:
        key, entry = stack.pop()
        info = model.facts.functions.get(key)
        if key in out or info is None or _disabled(info):
            continue
        out[key] = entry
        for callee in info.callees:
            # Plain functions and methods of the same class: Dynamo inlines both.
            if "." not in callee or (info.class_name and callee.startswith(info.class_name + ".")):
                if callee in model.facts.functions:
                    stack.append((callee, entry))
    return out


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


# -- shared: the `if` tests around a node ---------------------------------------------------------


def enclosing_tests(root: cst.CSTNode, target: cst.CSTNode) -> Optional[List[cst.BaseExpression]]:
    """The tests of the `if` statements (and `a if c else b`) between ``root`` and ``target``, or
    None when ``target`` is not inside ``root``. Nested functions and classes are not entered."""
    stack: List[Tuple[cst.CSTNode, Tuple[cst.BaseExpression, ...]]] = [(root, ())]
    while stack:
        node, tests = stack.pop()
        if node is target:
            return list(tests)
        if node is not root and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, (cst.If, cst.IfExp)):
            inner = tests + (node.test,)
            stack.append((node.test, tests))
            stack.append((node.body, inner))
            if node.orelse is not None:
                stack.append((node.orelse, inner))
            continue
        stack.extend((child, tests) for child in children(node))
    return None


def _is_main_guard(test: cst.BaseExpression) -> bool:
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
    )


def _is_constant_true(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.Name) and test.value == "True":
        return True
    return isinstance(test, cst.Integer) and test.value not in ("0",)


# -- shared: small literal helpers ------------------------------------------------------------------


def literal_int(expr: cst.BaseExpression) -> Optional[int]:
    """An integer literal or constant arithmetic on them (`3 * 32 * 32`)."""
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value.replace("_", ""), 0)
        except ValueError:
            return None
    if isinstance(expr, cst.BinaryOperation):
        left, right = literal_int(expr.left), literal_int(expr.right)
        if left is None or right is None:
            return None
        if isinstance(expr.operator, cst.Add):
            return left + right
        if isinstance(expr.operator, cst.Subtract):
            return left - right
        if isinstance(expr.operator, cst.Multiply):
            return left * right
        if isinstance(expr.operator, cst.FloorDivide) and right:
            return left // right
    return None


def _has_star(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


# ==================================================================================================
# GPU701: long elementwise chains in an uncompiled forward
# ==================================================================================================

# Pointwise ops: each one is a kernel that reads and writes whole tensors in eager mode.
_POINTWISE = frozenset(
    """abs absolute add sub subtract mul multiply div divide true_divide neg negative exp exp2 expm1
    log log1p log2 log10 sqrt rsqrt pow square sigmoid tanh relu clamp clamp_min clamp_max clip where
    sin cos tan sinh cosh asin acos atan atan2 erf erfc erfinv reciprocal sign sgn maximum minimum
    lerp addcmul addcdiv floor ceil round trunc frac logit nan_to_num masked_fill fmod remainder
    hypot xlogy logical_and logical_or logical_not logical_xor eq ne lt le gt ge isnan isinf""".split()
)
_F_POINTWISE = frozenset(
    """relu relu6 leaky_relu elu selu celu softplus softsign sigmoid tanh hardtanh hardsigmoid
    logsigmoid threshold dropout""".split()
)
# Calls that do the heavy lifting in one kernel of their own (or a module doing so).
_HEAVY_TORCH = frozenset(
    """matmul mm bmm baddbmm addmm einsum softmax log_softmax layer_norm group_norm batch_norm conv1d
    conv2d conv3d embedding cdist topk sort cumsum""".split()
)
_NON_TENSOR_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "training", "layout"})
_NON_TENSOR_METHODS = frozenset(
    """size dim numel nelement item tolist numpy stride data_ptr element_size is_contiguous
    get_device is_floating_point __len__ storage_offset""".split()
)
_VIEW_ATTRS = frozenset({"T", "mT", "H", "real", "imag", "data", "grad"})
_TENSOR_NAMESPACES = ("torch", "torch.linalg", "torch.special", "torch.fft", "torch.nn.functional")
_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
    cst.BitAnd, cst.BitOr, cst.BitXor,
)
_PLAIN_ANNOTATIONS = frozenset({"int", "float", "bool", "str"})


class _BodyScan(Walker):
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
            if param.default is not None and not (isinstance(param.default, cst.Name) and param.default.value == "None"):
                continue  # `scale=1.0`, `causal=False`: plain values
            annotation = param.annotation
            if annotation is not None and dotted_name(annotation.annotation) in _PLAIN_ANNOTATIONS:
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
                if isinstance(value, cst.Call):
                    qual = self.model.imports.qualify(value.func) or ""
                    if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") or (
                        qual.rpartition(".")[0] == "torch" and qual.rsplit(".", 1)[-1][:1].islower()
                    ):
                        out.add(target)
        for site in self.model.method_calls("register_buffer", "register_parameter"):
            if site.ctx.class_name == self.info.class_name and site.receiver_name == "self" and site.node.args:
                first = site.node.args[0].value
                if isinstance(first, cst.SimpleString) and isinstance(first.evaluated_value, str):
                    out.add("self." + first.evaluated_value)
        return out

    # -- what an expression is ----------------------------------------------------------------
    def tensorish(self, expr: cst.BaseExpression, strict: bool = False) -> bool:
        if isinstance(expr, cst.Name):
            kind = self.names.get(expr.value)
            return kind == "derived" or (kind == "param" and not strict)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            if attr in _NON_TENSOR_ATTRS:
                return False
            if attr in _VIEW_ATTRS:
                return self.tensorish(expr.value, strict)
            return dotted_name(expr) in self._self_tensors
        if isinstance(expr, cst.Subscript):
            return self.tensorish(expr.value, strict)
        if isinstance(expr, cst.Call):
            return self._call_tensorish(expr)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.MatrixMultiply):
                return True
            return self.tensorish(expr.left, strict) or self.tensorish(expr.right, strict)
        if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            return self.tensorish(expr.expression, strict)
        if isinstance(expr, cst.Comparison):
            if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in expr.comparisons):
                return False
            return self.tensorish(expr.left, strict) or any(self.tensorish(c.comparator, strict) for c in expr.comparisons)
        if isinstance(expr, cst.IfExp):
            return self.tensorish(expr.body, strict) or self.tensorish(expr.orelse, strict)
        return False

    def _call_tensorish(self, call: cst.Call) -> bool:
        func = call.func
        qual = self.model.imports.qualify(func)
        if qual is not None:
            head, _, last = qual.rpartition(".")
            return head in _TENSOR_NAMESPACES and last[:1].islower()
        if isinstance(func, cst.Attribute):
            if dotted_name(func.value) == "self":
                return True  # a submodule (or a helper of the module) returns a tensor
            if func.attr.value in _NON_TENSOR_METHODS:
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
        if isinstance(target, cst.Name):
            self.names[target.value] = "derived"
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
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
            if not isinstance(node.operator, cst.MatrixMultiplyAssign):
                self.pointwise += 1
            self._bind(node.target)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.MatrixMultiply):
            self.heavy += 1
        elif isinstance(node.operator, _ARITHMETIC) and (self.tensorish(node.left) or self.tensorish(node.right)):
            self.pointwise += 1

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self.tensorish(node):
            self.pointwise += 1

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, (cst.Minus, cst.BitInvert)) and self.tensorish(node.expression):
            self.pointwise += 1

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qual = self.model.imports.qualify(func)
        if qual is not None:
            head, _, last = qual.rpartition(".")
            if head == "torch.nn.functional":
                if last in _F_POINTWISE:
                    self.pointwise += 1
                else:
                    self.heavy += 1  # linear, layer_norm, gelu, scaled_dot_product_attention, ...
            elif head in _TENSOR_NAMESPACES:
                if last in _POINTWISE:
                    self.pointwise += 1
                elif last in _HEAVY_TORCH or head != "torch":
                    self.heavy += 1
            return
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if dotted_name(func.value) == "self" or (
                isinstance(func.value, cst.Attribute) and root_name(func.value) == "self"
            ):
                self.heavy += 1  # `self.fc1(x)`, `self.blocks.layer(x)`: a submodule or helper
                return
            base = method[:-1] if method.endswith("_") and not method.startswith("_") else method
            if self.tensorish(func.value):
                if base in _POINTWISE:
                    self.pointwise += 1
                elif base in _HEAVY_TORCH:
                    self.heavy += 1
            return
        if isinstance(func, cst.Name) and func.value not in _BUILTINS:
            self.heavy += 1  # `block(x)` in `for block in self.blocks`, a helper


_BUILTINS = frozenset(
    """len range isinstance int float bool str tuple list dict zip enumerate min max sum abs round
    getattr hasattr print super any all sorted reversed type iter next map filter""".split()
)


def scan_body(model: FileModel, info: FunctionInfo) -> _BodyScan:
    scan = _BodyScan(model, info)
    scan.walk(info.node.body)
    return scan


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
    requires = (("forward",), ("Module",))

    VALID = [
        Case(
            """
            import torch
            import torch.nn as nn

            class NewGELU(nn.Module):
                def forward(self, x):
                    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * torch.pow(x, 3.0))))

            class MLP(nn.Module):
                def __init__(self, d):
                    super().__init__()
                    self.fc = nn.Linear(d, 4 * d)
                    self.act = NewGELU()
                    self.proj = nn.Linear(4 * d, d)

                def forward(self, x):
                    return self.proj(self.act(self.fc(x)))

            model = torch.compile(MLP(768).cuda())
            """,
            note="activation module inside a compiled model",
        ),
        Case(
            """
            import math
            import torch.nn as nn
            import torch.nn.functional as F

            class CausalSelfAttention(nn.Module):
                def forward(self, x):
                    B, T, C = x.size()
                    q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
                    q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                    k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                    v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                    att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                    att = F.softmax(att, dim=-1)
                    y = self.attn_dropout(att) @ v
                    y = y.transpose(1, 2).contiguous().view(B, T, C)
                    return self.resid_dropout(self.c_proj(y))
            """,
            note="attention: mostly matmuls and submodules",
        ),
        Case(
            """
            import torch.nn as nn

            class Block(nn.Module):
                def forward(self, x):
                    x = x + self.attn(self.ln_1(x))
                    x = x + self.mlp(self.ln_2(x))
                    return x
            """,
            note="residual block calling submodules",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Swish(nn.Module):
                def forward(self, x):
                    return x * torch.sigmoid(x)
            """,
            note="tiny forward",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class ScaledTanh(nn.Module):
                @torch.compile(mode="max-autotune")
                def forward(self, x, y):
                    z = torch.tanh(x * self.a + y * self.b)
                    return torch.clamp(z * 2 - 1, -1, 1) + torch.exp(-x)
            """,
            note="forward decorated with torch.compile",
        ),
        Case(
            """
            import pytorch_lightning as pl
            import torch

            class LitRegressor(pl.LightningModule):
                def forward(self, x, y):
                    r = (x - y) / (y.abs() + 1e-6)
                    w = torch.exp(-r * r) * torch.sigmoid(x)
                    return w * r
            """,
            note="LightningModule, not an nn.Module subclass here",
        ),
        Case(
            """
            import torch
            from torch import nn

            class Head(nn.Module):
                def forward(self, feats, boxes):
                    h = self.conv(feats)
                    h = self.norm(h)
                    h = self.act(h)
                    h = self.pool(h)
                    h = self.drop(h)
                    out = self.fc(h.flatten(1) * self.gain)
                    return out * 2 + boxes, torch.sigmoid(out) - 0.5, out.relu()
            """,
            note="mostly submodule calls",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class FocalLoss(nn.Module):
                def forward(self, logits, target):
                    p = torch.sigmoid(logits)
                    ce = -(target * torch.log(p) + (1 - target) * torch.log(1 - p))
                    return (self.alpha * (1 - p) ** self.gamma * ce).mean()

            def build(cfg):
                model = Detector(cfg).cuda()
                if cfg.compile:
                    model = torch.compile(model)
                return model, FocalLoss()

            def make_criterion():
                crit = FocalLoss()
                return torch.compile(crit)
            """,
            note="module compiled through a helper",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class LabelSmoothing(nn.Module):
                def forward(self, logp, target):
                    nll = -logp.gather(-1, target[:, None])[:, 0]
                    smooth = -logp.mean(-1)
                    loss = (1 - self.eps) * nll + self.eps * smooth
                    return torch.where(target >= 0, loss, torch.zeros_like(loss)).sum() / (target >= 0).sum()

            criterion = LabelSmoothing()

            @torch.compile
            def train_step(net, x, y):
                return criterion(net(x).log_softmax(-1), y)
            """,
            note="called from a compiled function: Dynamo traces it",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            class FocalLoss(nn.Module):
                def __init__(self, alpha=0.25, gamma=2.0):
                    super().__init__()
                    self.alpha, self.gamma = alpha, gamma

                def forward(self, logits, target):  # expect: GPU701 info
                    ce = F.cross_entropy(logits, target, reduction="none")
                    p = torch.exp(-ce)
                    loss = self.alpha * (1 - p) ** self.gamma * ce
                    return loss.mean()
            """,
            note="focal loss",
        ),
        Case(
            """
            import math
            import torch
            from torch import nn

            class NewGELU(nn.Module):
                def forward(self, x):  # expect: GPU701 info
                    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
            """,
            note="hand-written GELU",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Base(nn.Module):
                pass

            class SoftClip(Base):
                def __init__(self):
                    super().__init__()
                    self.scale = nn.Parameter(torch.ones(1))

                def forward(self, x):  # expect: GPU701 info
                    y = x / self.scale
                    y = y.sigmoid() * 2 - 1
                    y = y.clamp(-0.99, 0.99)
                    return y.abs().sqrt() * y.sign()
            """,
            note="subclass of a module subclass, tensor methods",
        ),
        Case(
            """
            import torch
            from torch.nn import Module

            class RMSNormGate(Module):
                def forward(self, x, gate):  # expect: GPU701 info
                    x = x.float()
                    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
                    x = x * self.weight
                    return x * torch.sigmoid(gate) + gate * 0.1

            class Other(Module):
                def forward(self, x):
                    return x

            compiled = torch.compile(Other())
            """,
            note="another class is compiled, not this one",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class MaskedMSE(nn.Module):
                def forward(self, pred, target, mask=None):  # expect: GPU701 info
                    diff = pred - target
                    err = diff * diff
                    if mask is not None:
                        err = err * mask
                    err = torch.where(torch.isnan(err), torch.zeros_like(err), err)
                    return err.sum() / (mask.sum() + 1e-8)

            criterion = MaskedMSE()
            for x, y, m in loader:
                loss = criterion(model(x), y, m)
                loss.backward()
                optimizer.step()
            """,
            note="loss module used in a training loop",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Snake(nn.Module):
                def __init__(self, channels):
                    super().__init__()
                    self.alpha = nn.Parameter(torch.ones(1, channels, 1))

                def forward(self, x):  # expect: GPU701 info
                    a = self.alpha
                    return x + (1.0 / (a + 1e-9)) * torch.sin(a * x).pow(2)

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv1d(1, 64, 7)

            encoder = torch.jit.trace(Encoder().eval(), example)
            """,
            note="only an unrelated model is traced",
        ),
    ]

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
            if _disabled(info) or any(d in _JIT for d in info.decorators):
                continue
            scan = scan_body(model, info)
            if scan.pointwise < _MIN_POINTWISE or scan.pointwise < 2 * scan.heavy:
                continue
            yield self.report(
                info.node.name,
                f"`{name}.forward` runs {scan.pointwise} elementwise operations, each a separate "
                "memory-bound kernel, and nothing in this file compiles it",
            )


# ==================================================================================================
# GPU702: torch.compile called again and again
# ==================================================================================================


def _one_shot(test: cst.BaseExpression) -> bool:
    """`if compiled is None`, `if epoch == 0`, `if not hasattr(self, "fast")`: a guard that lets
    the compile run once. A periodic `% N` test is not one."""
    stack = [test]
    found = False
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            return False
        if isinstance(node, cst.Comparison):
            if any(isinstance(c.operator, (cst.Equal, cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in node.comparisons):
                found = True
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            found = True
            stack.append(node.expression)
        elif isinstance(node, cst.BooleanOperation):
            stack.extend((node.left, node.right))
    return found


def _outermost_loop(loop: LoopInfo) -> LoopInfo:
    while loop.parent is not None:
        loop = loop.parent
    return loop


def _loop_chain(ctx: Context, stop: Optional[LoopInfo]) -> List[LoopInfo]:
    """The loops around ``ctx`` from the innermost out to ``stop`` (included)."""
    out = []
    loop = ctx.loop
    while loop is not None:
        out.append(loop)
        if loop is stop:
            break
        loop = loop.parent
    return out


def _built_anew(model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int, loop: Optional[LoopInfo]) -> bool:
    """The object comes from this iteration of ``loop`` (its target or something built in its
    body), or, with no loop, from the function's own body: each run compiles a new object."""
    if isinstance(expr, cst.Call):
        qual = model.imports.qualify(expr.func)
        if qual in _COMPILE:
            inner = _first_argument(expr, "model")
            return inner is not None and _built_anew(model, inner, ctx, order, loop)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SAME_OBJECT_METHODS:
            return _built_anew(model, expr.func.value, ctx, order, loop)
        return True  # `torch.compile(Net(cfg))`, `torch.compile(build(cfg))`
    name = dotted_name(expr)
    if name is None:
        root = root_name(expr)  # `torch.compile(models[i])`
        return loop is not None and root is not None and any(root in inner.targets for inner in _loop_chain(ctx, loop))
    head = name.split(".", 1)[0]
    if loop is not None:
        for inner in _loop_chain(ctx, loop):
            if head in inner.targets or head in inner.batch_names:
                return True
    elif ctx.function is not None and head in ctx.function.params and not name.startswith("self."):
        return False
    for assignment in model.assignments(name, ctx):
        if assignment.order >= order or assignment.ctx.function is not ctx.function:
            continue
        value = assignment.value
        if value is not None and isinstance(value, cst.Call) and model.imports.qualify(value.func) in _COMPILE:
            continue  # `model = torch.compile(model)`: the same object again
        if loop is None or (assignment.ctx.loop is not None and assignment.ctx.loop.within(loop)):
            return True
    return False


class CompileInLoop(Rule):
    code = "GPU702"
    name = "compile-in-loop"
    summary = "`torch.compile(...)` called inside a loop or a per-step function"
    what = """
        A `torch.compile(...)` call inside a loop, inside a function that runs on every training
        step, or inside a function that a loop calls, when each run compiles the same object
        again. Compiling once before the loop, at module level, with a `@torch.compile`
        decorator, or a fresh model per iteration (a sweep over configurations) is not
        reported, nor a call behind a run-once guard such as `if compiled is None:`.
    """
    why = """
        `torch.compile` returns a new wrapper around the model on every call. A new wrapper
        does its guard checks from scratch and can trace and compile the model again, which
        takes seconds to minutes; wrapping an already compiled model nests wrappers and can
        hit the recompile limit, after which the model silently runs in eager mode.
    """
    example = """
        for epoch in range(epochs):
            model = torch.compile(model)
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
    """
    instead = """
        model = torch.compile(model)  # once, before training
        for epoch in range(epochs):
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
    """
    hint = "compile once, before the loop, and reuse the compiled model"
    requires = (("compile",),)

    VALID = [
        Case(
            """
            import torch

            model = torch.compile(Net().cuda())
            for epoch in range(10):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
            """,
            note="compiled once before the loop",
        ),
        Case(
            """
            import torch

            @torch.compile(mode="reduce-overhead")
            def train_step(x, y):
                loss = criterion(model(x), y)
                loss.backward()
                return loss

            for x, y in loader:
                train_step(x, y)
                optimizer.step()
            """,
            note="decorator",
        ),
        Case(
            """
            import torch

            results = {}
            for lr in [1e-3, 3e-4, 1e-4]:
                model = build_model(cfg).cuda()
                model = torch.compile(model)
                opt = torch.optim.AdamW(model.parameters(), lr=lr)
                results[lr] = train(model, opt)
            """,
            note="hyper-parameter sweep: a new model each iteration",
        ),
        Case(
            """
            import torch

            compiled = {name: None for name in models}
            for name, m in models.items():
                compiled[name] = torch.compile(m, dynamic=False)
            """,
            note="each model of a collection compiled once",
        ),
        Case(
            """
            import torch

            class Trainer:
                def train_step(self, batch):
                    if self.fast_model is None:
                        self.fast_model = torch.compile(self.model)
                    loss = self.fast_model(batch).mean()
                    loss.backward()
                    self.optimizer.step()

                def fit(self, loader):
                    for batch in loader:
                        self.train_step(batch)
            """,
            note="lazy compile behind a run-once guard",
        ),
        Case(
            """
            import re
            import torch

            for line in open("log.txt"):
                pattern = re.compile(r"loss=(\\S+)")
                m = pattern.search(line)
            """,
            note="re.compile",
        ),
        Case(
            """
            import torch

            def make_model(cfg):
                net = Net(cfg)
                return torch.compile(net)

            for cfg in configs:
                model = make_model(cfg)
                evaluate(model)
            """,
            note="a helper that builds and compiles a new model",
        ),
        Case(
            """
            import torch

            def main(args):
                model = Net().cuda()
                if args.compile:
                    model = torch.compile(model)
                for epoch in range(args.epochs):
                    train_one_epoch(model, loader)
            """,
            note="behind a flag, outside the loop",
        ),
        Case(
            """
            import torch
            from accelerate import Accelerator
            from transformers import AutoModelForSequenceClassification

            accelerator = Accelerator(mixed_precision="bf16")
            model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2)
            if args.torch_compile:
                model = torch.compile(model)
            model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)
            for epoch in range(args.epochs):
                for batch in train_dl:
                    outputs = model(**batch)
                    accelerator.backward(outputs.loss)
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="Accelerate script compiling once before training",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch

            for epoch in range(epochs):
                model = torch.compile(model)  # expect: GPU702
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
            """,
            note="re-wrapped every epoch",
        ),
        Case(
            """
            import torch

            for x, y in loader:
                fast = torch.compile(model)  # expect: GPU702
                loss = criterion(fast(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="every step",
        ),
        Case(
            """
            import torch

            def train_step(model, batch, optimizer):
                step_model = torch.compile(model, mode="max-autotune")  # expect: GPU702
                loss = step_model(batch).mean()
                loss.backward()
                optimizer.step()

            for batch in loader:
                train_step(model, batch, optimizer)
            """,
            note="inside the per-step helper",
        ),
        Case(
            """
            import torch as T

            def evaluate(model, loader):
                fast = T.compile(model)  # expect: GPU702
                return sum(fast(x).sum() for x in loader)

            for epoch in range(10):
                train_one_epoch(model)
                evaluate(model, val_loader)
            """,
            note="helper called once per epoch recompiles the same model",
        ),
        Case(
            """
            from torch import compile as tcompile

            class Trainer:
                def fit(self, loader):
                    while self.step < self.max_steps:
                        self.model = tcompile(self.model)  # expect: GPU702
                        for batch in loader:
                            loss = self.model(batch).mean()
                            loss.backward()
                            self.optimizer.step()
                            self.step += 1
            """,
            note="aliased import, while loop, attribute target",
        ),
        Case(
            """
            import torch

            for i, (x, y) in enumerate(loader):
                if args.compile:
                    model_c = torch.compile(model)  # expect: GPU702
                else:
                    model_c = model
                loss = criterion(model_c(x), y)
                loss.backward()
                optimizer.step()
                if i % 1000 == 0:
                    model_c = torch.compile(model)  # expect: GPU702 info
            """,
            note="behind a flag in the loop; periodic",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        facts = compile_facts(model)
        for site in model.calls_to(*_COMPILE):
            if id(site.node) in facts.decorator_calls:
                continue
            target = _first_argument(site.node, "model")
            if target is None:
                continue
            report = self._check_site(model, site, target)
            if report is not None:
                yield report

    def _guarded(self, root: cst.CSTNode, site: CallSite) -> bool:
        tests = enclosing_tests(root, site.node)
        return bool(tests) and any(_one_shot(t) for t in tests)

    def _check_site(self, model: FileModel, site: CallSite, target: cst.BaseExpression) -> Optional[Report]:
        ctx = site.ctx
        code = snippet(model, site.node, 50)
        heat = model.heat(ctx)
        loop = ctx.loop
        if loop is not None:
            if self._guarded(_outermost_loop(loop).node, site):
                return None
            if heat is None and _built_anew(model, target, ctx, site.order, _outermost_loop(loop)):
                return None
            message = (
                f"`{code}` runs on every iteration of the loop on line {{line}}: "
                "each call wraps the model again and may recompile it"
            )
            severity = self.severity_for(heat) if heat else self.severity
            return Report(self, site.node, message, severity, related=loop.node)
        function = ctx.function
        if function is None:
            return None
        if ctx.conditional and self._guarded(function.node, site):
            return None
        if heat is not None:
            message = (
                f"`{code}` runs on every training step (in `{function.node.name.value}`): "
                "each call wraps the model again and may recompile it"
            )
            return self.report(site.node, message, severity=self.severity_for(heat))
        if _built_anew(model, target, ctx, site.order, None):
            return None
        for caller in model.call_sites(function):
            caller_loop = caller.ctx.loop
            if caller_loop is None:
                continue
            passed = self._passed_value(function, target, caller)
            if passed is False:
                continue
            if passed is not None and _built_anew(model, passed, caller.ctx, caller.order, _outermost_loop(caller_loop)):
                continue
            message = (
                f"`{code}` runs each time the loop on line {{line}} calls `{function.node.name.value}`: "
                "each call wraps the same model again and may recompile it"
            )
            return Report(self, site.node, message, self.severity, related=caller_loop.node)
        return None

    @staticmethod
    def _passed_value(function: FunctionInfo, target: cst.BaseExpression, caller: CallSite):
        """The caller's argument for a parameter the function compiles; None when the compiled
        object is not a parameter; False when it cannot be told."""
        if not isinstance(target, cst.Name) or target.value not in function.params:
            return None
        position = function.params.index(target.value)
        if function.class_name is not None:
            position -= 1
        arg = call_argument(caller.node, target.value, position)
        return False if arg is None else arg.value


# ==================================================================================================
# GPU703: graph breaks inside compiled code
# ==================================================================================================

_BREAK_METHODS = ("item", "tolist", "numpy")
_BOOL_TORCH = re.compile(r"^(is_|get_|numel$|result_type$|can_cast$|promote_types$)")


def _numpy_rooted(model: FileModel, expr: Optional[cst.BaseExpression]) -> bool:
    while isinstance(expr, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Call):
            qual = model.imports.qualify(expr.func)
            if qual is not None:
                return qual.split(".")[0] == "numpy"
            expr = expr.func
        else:
            expr = expr.value
    return False


def _inner_break(expr: Optional[cst.BaseExpression]) -> bool:
    """The receiver chain already holds a breaking call: the chain is reported once, there."""
    while isinstance(expr, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _BREAK_METHODS:
                return True
            expr = expr.func
        else:
            expr = expr.value
    return False


class GraphBreakInCompiled(Rule):
    code = "GPU703"
    name = "graph-break-in-compiled-code"
    summary = "`.item()`, `print`, `.tolist()` or a tensor-valued `if` inside compiled code"
    what = """
        Inside a function decorated with `@torch.compile` (any spelling, aliases and
        `functools.partial` included), a function passed to `torch.compile(fn)`, the `forward`
        of a module class that the file compiles (`torch.compile(model)`, `model.compile()`,
        its submodules too), and the functions and methods these call: `.item()`, `.tolist()`,
        `print(...)`, `if`/`while` tests whose value depends on tensor data (`if x.sum() > 0:`),
        and, as information, `.numpy()`. Each break is reported at its own line. Breaks under a
        Python condition (`if self.debug:`) are information only.
    """
    why = """
        TorchDynamo can only put into a graph what it can trace without running it. Reading a
        tensor's value into Python, printing, or branching on tensor data forces it to stop:
        the graph is cut in two, the first part runs, the GPU is synchronised to get the value,
        and Python continues in eager mode until a new graph starts. Each break costs a sync,
        loses fusion across the cut, and can multiply the number of compiled graphs.
    """
    example = """
        @torch.compile
        def train_step(x, y):
            loss = criterion(model(x), y)
            if loss.isnan():
                raise RuntimeError("nan loss")
            print("loss", loss.item())
            return loss
    """
    instead = """
        @torch.compile
        def train_step(x, y):
            return criterion(model(x), y)

        loss = train_step(x, y)  # checks and logging outside the compiled function
        if step % 100 == 0:
            print("loss", loss.item())
    """
    hint = (
        "move logging and value checks out of the compiled function, "
        "or use `torch.where`/`torch.cond` for data-dependent choices"
    )
    requires = (("compile",),)

    VALID = [
        Case(
            """
            import torch

            @torch.compile
            def loss_fn(logits, target):
                return torch.nn.functional.cross_entropy(logits, target)

            for x, y in loader:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                print(loss.item())
            """,
            note="the read happens outside the compiled function",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def forward(self, x, mask=None):
                    if mask is not None:
                        x = x.masked_fill(mask, 0.0)
                    if x.dim() == 4 and x.shape[1] > 3:
                        x = x.flatten(2)
                    if self.training:
                        x = self.drop(x)
                    return self.fc(x)

            model = torch.compile(Net())
            """,
            note="None checks, shapes and flags do not break",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def forward(self, x):
                    print("shape", x.shape)
                    return self.fc(x).item()

            model = Net().cuda()
            """,
            note="not compiled",
        ),
        Case(
            """
            import numpy as np
            import torch

            @torch.compile(fullgraph=False)
            def augment(x, cfg):
                scale = np.float32(cfg.scale).item()
                return x * scale
            """,
            note="NumPy scalar",
        ),
        Case(
            """
            import torch

            @torch.compiler.disable
            def log_stats(t):
                print(t.mean().item())

            @torch.compile
            def step(x):
                y = x.relu()
                log_stats(y)
                return y
            """,
            note="helper excluded from compilation on purpose",
        ),
        Case(
            """
            import re
            import torch

            pattern = re.compile(r"\\d+")

            def parse(line):
                print(line)
                return int(pattern.match(line).group())
            """,
            note="re.compile",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            from transformers import AutoModel

            class Wrapper(nn.Module):
                def forward(self, x):
                    out = self.backbone(x)
                    print(out.shape)
                    return out

            backbone = torch.compile(AutoModel.from_pretrained("bert-base-uncased"))
            head = Wrapper()
            """,
            note="an imported model is compiled, not this class",
        ),
        Case(
            """
            import lightning as L
            import torch
            import torch.nn.functional as F

            class LitClassifier(L.LightningModule):
                def forward(self, x):
                    return self.net(x)

                def training_step(self, batch, batch_idx):
                    x, y = batch
                    loss = F.cross_entropy(self(x), y)
                    print(f"step {batch_idx}: {loss.item():.3f}")
                    self.log("train_loss", loss)
                    return loss

            model = torch.compile(LitClassifier())
            L.Trainer(max_epochs=3).fit(model, loader)
            """,
            note="compiling a LightningModule traces forward, not training_step",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch

            @torch.compile
            def train_step(x, y):
                loss = criterion(model(x), y)
                print("loss", loss.item())  # expect: GPU703
                return loss
            """,
            note="print and item on one line",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Gate(nn.Module):
                def forward(self, x):
                    score = self.proj(x).sigmoid()
                    if score.mean() > 0.5:  # expect: GPU703
                        return x * score
                    return x

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gate = Gate()

            model = Net().cuda()
            model = torch.compile(model, mode="max-autotune")
            """,
            note="tensor test in a submodule of a compiled model",
        ),
        Case(
            """
            import functools
            import torch

            fast = functools.partial(torch.compile, fullgraph=False)

            @fast
            def decode(logits):
                ids = logits.argmax(-1).tolist()  # expect: GPU703
                return ids
            """,
            note="partial(torch.compile) alias",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def helper(self, h):
                    while h.norm() > 1.0:  # expect: GPU703
                        h = h / 2
                    return h

                def forward(self, x):
                    h = self.helper(self.body(x))
                    arr = h.detach().cpu().numpy()  # expect: GPU703 info
                    return h

            net = Model()
            net.compile()
            """,
            note="model.compile(), a helper method, numpy",
        ),
        Case(
            """
            import torch

            def step_fn(batch):
                out = model(batch["x"])
                n_pos = (out > 0).sum().item()  # expect: GPU703
                if self_debug:
                    print(out)  # expect: GPU703 info
                return out

            compiled_step = torch.compile(step_fn)
            """,
            note="function passed to torch.compile",
        ),
        Case(
            """
            import torch

            compile_fn = torch.compile(mode="reduce-overhead")

            @compile_fn
            def policy(obs):
                logits = net(obs)
                action = torch.distributions.Categorical(logits=logits).sample()
                return action.item()  # expect: GPU703
            """,
            note="decorator factory bound to a name",
        ),
        Case(
            """
            import torch
            from torch import nn

            class WeightedMSE(nn.Module):
                def forward(self, pred, y):
                    w = (y > 0).float().mean().item()  # expect: GPU703
                    return ((pred - y) ** 2).mean() * w

            loss_fn = WeightedMSE()

            @torch.compile(dynamic=True)
            def step(pred, y):
                return loss_fn(pred, y)
            """,
            note="a module the compiled function calls",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        facts = compile_facts(model)
        traced = _traced_functions(model, facts)
        if not traced:
            return
        for site in model.method_calls(*_BREAK_METHODS):
            function = site.ctx.function
            if function is None or function.key not in traced or site.node.args:
                continue
            if _numpy_rooted(model, site.receiver) or _inner_break(site.receiver):
                continue
            entry = traced[function.key]
            if site.method == "numpy":
                yield self.report(
                    site.node,
                    f"`.numpy()` inside code compiled through `{entry}`: unless Dynamo can trace the "
                    "NumPy code that follows, the graph breaks here",
                    severity=Severity.INFO,
                )
                continue
            yield self.report(
                site.node,
                f"`.{site.method}()` inside code compiled through `{entry}` reads tensor data into "
                "Python: the graph breaks and the GPU is synchronised",
                severity=Severity.INFO if site.ctx.conditional else self.severity,
            )
        for site in model.facts.calls_by_callee.get("print", ()):
            function = site.ctx.function
            if function is None or function.key not in traced:
                continue
            yield self.report(
                site.node,
                f"`print(...)` inside code compiled through `{traced[function.key]}` cuts the graph in two",
                severity=Severity.INFO if site.ctx.conditional else self.severity,
            )
        scans: Dict[str, _BodyScan] = {}
        for condition in model.facts.conditions:
            function = condition.ctx.function
            if condition.kind == "assert" or function is None or function.key not in traced:
                continue
            scan = scans.get(function.key)
            if scan is None:
                scan = scans[function.key] = scan_body(model, function)
            if not self._data_dependent(model, scan, condition.test, condition.ctx):
                continue
            yield self.report(
                condition.test,
                f"`{condition.kind}` on tensor data (`{snippet(model, condition.test)}`) inside code compiled "
                f"through `{traced[function.key]}`: the graph breaks to evaluate it",
                severity=Severity.INFO if condition.ctx.conditional else self.severity,
            )

    def _data_dependent(self, model: FileModel, scan: _BodyScan, test: cst.BaseExpression, ctx: Context) -> bool:
        if isinstance(test, cst.BooleanOperation):
            return self._data_dependent(model, scan, test.left, ctx) or self._data_dependent(model, scan, test.right, ctx)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._data_dependent(model, scan, test.expression, ctx)
        if isinstance(test, cst.Comparison):
            if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in test.comparisons):
                return False
            parts = [test.left, *(c.comparator for c in test.comparisons)]
            return any(self._tensor_value(model, scan, p, ctx) for p in parts)
        return self._tensor_value(model, scan, test, ctx)

    @staticmethod
    def _tensor_value(model: FileModel, scan: _BodyScan, expr: cst.BaseExpression, ctx: Context) -> bool:
        if isinstance(expr, cst.Call):
            qual = model.imports.qualify(expr.func)
            if qual is not None and _BOOL_TORCH.match(qual.rsplit(".", 1)[-1]):
                return False  # torch.is_tensor(x), torch.is_grad_enabled()
        return scan.tensorish(expr, strict=True) or model.is_tensor(expr, ctx)


# ==================================================================================================
# GPU704: convolution nets without the cuDNN autotuner
# ==================================================================================================

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


def _trains(model: FileModel) -> bool:
    return any(model.is_training_loop(loop) for loop in model.facts.loops)


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
    if isinstance(anchor, cst.SimpleStatementLine) and anchor.trailing_whitespace.comment is None:
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
    fixable = "unsafe"
    requires = (("Conv", "torchvision"), ("cuda",), _TRAINING_TEXT)

    VALID = [
        Case(
            """
            import torch
            import torch.backends.cudnn as cudnn
            import torch.nn as nn

            cudnn.benchmark = True
            model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU()).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="set through an alias",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            def setup(args):
                torch.backends.cudnn.deterministic = True
                torch.backends.cudnn.benchmark = False

            model = nn.Conv2d(3, 8, 3).cuda()
            for x in loader:
                model(x.cuda()).mean().backward()
                optimizer.step()
            """,
            note="determinism requested",
        ),
        Case(
            """
            import torch.nn as nn

            model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="CPU script",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            import torchvision

            def collate(batch):
                return pad_to_max(batch)

            loader = DataLoader(ds, batch_size=8, collate_fn=collate)
            model = torchvision.models.resnet18().cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="custom collate: sizes may vary",
        ),
        Case(
            """
            import torch
            import torchvision

            model = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights="DEFAULT").cuda()
            for images, targets in loader:
                losses = model([i.cuda() for i in images], targets)
                sum(losses.values()).backward()
                optimizer.step()
            """,
            note="detection: variable image sizes",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 32, 3)

            model = Net().to("cuda")
            model.eval()
            with torch.no_grad():
                for x in loader:
                    preds = model(x.cuda())
            """,
            note="inference only: no training loop",
        ),
        Case(
            """
            import lightning as L
            import torch.nn as nn

            class Lit(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 16, 3)

                def training_step(self, batch, idx):
                    return self.conv(batch[0]).mean()

            trainer = L.Trainer(accelerator="cuda", benchmark=True)
            trainer.fit(Lit())
            """,
            note="Lightning: the Trainer owns the loop (and its `benchmark` flag)",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            torch.use_deterministic_algorithms(True)
            model = nn.Conv3d(1, 8, 3).cuda()
            for x in loader:
                loss = model(x.cuda()).mean()
                loss.backward()
                optimizer.step()
            """,
            note="deterministic algorithms",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            import torch.nn as nn

            model = nn.Sequential(
                nn.Conv2d(3, 64, 3, padding=1),  # expect: GPU704 info
                nn.ReLU(),
            ).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            import torch.nn as nn
            torch.backends.cudnn.benchmark = True

            model = nn.Sequential(
                nn.Conv2d(3, 64, 3, padding=1),  # expect: GPU704 info
                nn.ReLU(),
            ).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
        ),
        Case(
            """
            import torch
            from torchvision import models

            device = torch.device("cuda")
            model = models.resnet50(weights=None).to(device)  # expect: GPU704 info
            for images, labels in train_loader:
                images, labels = images.to(device), labels.to(device)
                loss = criterion(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            from torchvision import models
            torch.backends.cudnn.benchmark = True

            device = torch.device("cuda")
            model = models.resnet50(weights=None).to(device)  # expect: GPU704 info
            for images, labels in train_loader:
                images, labels = images.to(device), labels.to(device)
                loss = criterion(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            """,
            note="torchvision model",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            import torchvision.transforms as T

            train_tf = T.Compose([T.RandomResizedCrop(224), T.ToTensor()])

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 32, 3)  # expect: GPU704 info
                    self.head = nn.Linear(32, 10)

            def train(model, loader, opt):
                for x, y in loader:
                    loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                    loss.backward()
                    opt.step()

            if __name__ == "__main__":
                torch.backends.cudnn.deterministic = False
                train(Net().cuda(), loader, opt)
            """,
            note="RandomResizedCrop gives a fixed size; deterministic explicitly off",
        ),
        Case(
            """
            import torch  # the framework
            import torch.nn as nn
            from torch.cuda.amp import autocast

            model = nn.Conv3d(1, 16, 3).cuda()  # expect: GPU704 info
            for vol in loader:
                with autocast():
                    loss = model(vol.cuda()).mean()
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            import torch  # the framework
            import torch.nn as nn
            from torch.cuda.amp import autocast
            torch.backends.cudnn.benchmark = True

            model = nn.Conv3d(1, 16, 3).cuda()  # expect: GPU704 info
            for vol in loader:
                with autocast():
                    loss = model(vol.cuda()).mean()
                loss.backward()
                optimizer.step()
            """,
            note="3-D convolutions",
        ),
        Case(
            """
            import torch.backends.cudnn as cudnn
            from torch import nn

            cudnn.enabled = True
            net = nn.ConvTranspose2d(64, 3, 4, 2, 1).cuda()  # expect: GPU704 info
            for z in loader:
                loss = net(z.cuda()).pow(2).mean()
                loss.backward()
                optim.step()
            """,
            note="torch not imported as `torch`: no fix",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            try:
                import wandb
            except ImportError:
                wandb = None
            # model
            net = nn.Conv2d(3, 3, 1).cuda()  # expect: GPU704 info
            for x in loader:
                net(x.cuda()).sum().backward()
                optimizer.step()
            """,
            fixed="""
            import torch
            import torch.nn as nn
            torch.backends.cudnn.benchmark = True
            try:
                import wandb
            except ImportError:
                wandb = None
            # model
            net = nn.Conv2d(3, 3, 1).cuda()  # expect: GPU704 info
            for x in loader:
                net(x.cuda()).sum().backward()
                optimizer.step()
            """,
            note="inserted after the last top-level import line",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.uses_cuda:
            return
        convs = model.calls_to(*_CONV_LAYERS) + _torchvision_builders(model)
        if not convs or not _trains(model) or self._decided(model) or self._variable_shapes(model):
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


# ==================================================================================================
# GPU705: debugging switches left on
# ==================================================================================================

_SET_ANOMALY = ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly")
_ANOMALY_CONTEXT = ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly")
_PROFILERS = ("torch.autograd.profiler.profile", "torch.autograd.profiler.emit_nvtx")
_GRADCHECKS = (
    "torch.autograd.gradcheck",
    "torch.autograd.gradgradcheck",
    "torch.autograd.gradcheck.gradcheck",
    "torch.autograd.gradcheck.gradgradcheck",
)
_OPTIMIZER_NAME = re.compile(r"optim|(^|_)opt($|_)", re.IGNORECASE)


def _in_test(site: CallSite) -> bool:
    function = site.ctx.function
    return function is not None and function.node.name.value.startswith("test")


def _find_with(root: cst.CSTNode, call: cst.Call) -> Optional[cst.With]:
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.With) and any(item.item is call for item in node.items):
            return node
        if node is not root and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(children(node))
    return None


def _block_trains(model: FileModel, block: cst.CSTNode, class_name: Optional[str]) -> bool:
    """The block runs backward or an optimizer step, itself or through functions of this file."""
    stack: List[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(children(node))
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        key = None
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = dotted_name(func.value) or ""
            if method == "backward":
                return True
            if method == "step" and _OPTIMIZER_NAME.search(receiver.rsplit(".", 1)[-1]):
                return True
            if model.imports.qualify(func) is None:
                key = f"{class_name}.{method}" if receiver in ("self", "cls") and class_name else f".{method}"
        elif isinstance(func, cst.Name) and model.imports.qualify(func) is None:
            key = func.value
        if key is not None and (model.function_trains(key) or model.function_has_training_loop(key)):
            return True
    return False


class DebugApiLeftOn(Rule):
    code = "GPU705"
    name = "debug-api-left-on"
    summary = "anomaly detection, the autograd profiler or gradcheck left on in training"
    what = """
        `torch.autograd.set_detect_anomaly(True)` in a file that trains;
        `with torch.autograd.detect_anomaly():`, `torch.autograd.profiler.profile(...)` and
        `torch.autograd.profiler.emit_nvtx(...)` around training code; `torch.autograd.gradcheck`
        and `gradgradcheck` inside training code. Calls behind a flag (`if args.debug:`), with
        a non-literal switch (`set_detect_anomaly(args.debug)`, `profile(enabled=cfg.profile)`)
        or switched off are not reported.
    """
    why = """
        These tools trade speed for information. Anomaly mode records a stack trace for every
        autograd node and checks every backward result for NaN, which forces a host-device
        sync per operation; a small model measured about twice as slow with it on. The autograd
        profiler records every operator call, emit_nvtx adds NVTX ranges to each, and gradcheck
        runs the function many extra times in double precision. Left on after debugging, they
        slow every step of every run.
    """
    example = """
        torch.autograd.set_detect_anomaly(True)
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    instead = """
        torch.autograd.set_detect_anomaly(args.detect_anomaly)  # off unless asked for
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    hint = "remove it, or put it behind a debug flag that is off by default"
    fixable = "unsafe, for `set_detect_anomaly(True)` (switched to False)"
    requires = (("anomaly", "profiler", "emit_nvtx", "gradcheck"),)

    VALID = [
        Case(
            """
            import torch

            if args.debug:
                torch.autograd.set_detect_anomaly(True)
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="behind a flag",
        ),
        Case(
            """
            import torch

            torch.autograd.set_detect_anomaly(cfg.detect_anomaly)
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="switch from the configuration",
        ),
        Case(
            """
            import torch

            torch.autograd.set_detect_anomaly(False)
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="switched off",
        ),
        Case(
            """
            import torch
            from torch.autograd import gradcheck

            def test_custom_op():
                x = torch.randn(4, 4, dtype=torch.double, requires_grad=True)
                assert gradcheck(MyOp.apply, (x,))
            """,
            note="gradcheck in a test",
        ),
        Case(
            """
            import torch

            def train(model, loader, opt, profile=False):
                with torch.autograd.profiler.profile(enabled=profile) as prof:
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        opt.step()
            """,
            note="profiler enabled by a parameter",
        ),
        Case(
            """
            import torch
            from contextlib import nullcontext

            for x, y in loader:
                ctx = torch.autograd.detect_anomaly() if args.debug else nullcontext()
                with ctx:
                    loss = criterion(model(x), y)
                    loss.backward()
                optimizer.step()
            """,
            note="conditional expression on a flag",
        ),
        Case(
            """
            import torch
            from torch.profiler import profile, ProfilerActivity, schedule

            with profile(activities=[ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=1, active=3)) as p:
                for step, (x, y) in enumerate(loader):
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                    p.step()
            """,
            note="torch.profiler with a schedule is deliberate",
        ),
        Case(
            """
            import torch

            torch.autograd.set_detect_anomaly(True)
            with torch.autograd.detect_anomaly():
                out = model(sample)
                print(out.shape)
            """,
            note="a script that never trains",
        ),
        Case(
            """
            import lightning as L

            trainer = L.Trainer(max_epochs=10, detect_anomaly=args.detect_anomaly, profiler="simple")
            trainer.fit(LitModel(), datamodule=dm)
            """,
            note="Lightning's own switches, off unless asked for",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch

            torch.autograd.set_detect_anomaly(True)  # expect: GPU705
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            fixed="""
            import torch

            torch.autograd.set_detect_anomaly(False)  # expect: GPU705
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
        ),
        Case(
            """
            from torch import autograd

            def main():
                autograd.set_detect_anomaly(mode=True)  # expect: GPU705
                train(model, loader)

            def train(model, loader):
                for batch in loader:
                    model(batch).loss.backward()
                    optimizer.step()

            if __name__ == "__main__":
                main()
            """,
            fixed="""
            from torch import autograd

            def main():
                autograd.set_detect_anomaly(mode=False)  # expect: GPU705
                train(model, loader)

            def train(model, loader):
                for batch in loader:
                    model(batch).loss.backward()
                    optimizer.step()

            if __name__ == "__main__":
                main()
            """,
            note="keyword argument, aliased module",
        ),
        Case(
            """
            import torch

            for x, y in loader:
                with torch.autograd.detect_anomaly():  # expect: GPU705
                    loss = criterion(model(x), y)
                    loss.backward()
                optimizer.step()
            """,
            note="anomaly context in the loop",
        ),
        Case(
            """
            import torch.autograd.profiler as profiler

            def train_epoch(model, loader, opt):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    opt.step()

            with profiler.profile(use_cuda=True) as prof:  # expect: GPU705
                train_epoch(model, loader, opt)
            print(prof.key_averages().table())
            """,
            note="legacy profiler around training",
        ),
        Case(
            """
            import torch
            from torch.autograd import gradcheck

            class Trainer:
                def step(self, batch):
                    x = batch.double().requires_grad_()
                    gradcheck(self.layer, (x,))  # expect: GPU705
                    loss = self.model(batch).mean()
                    loss.backward()
                    self.optimizer.step()
            """,
            note="gradcheck on every step",
        ),
        Case(
            """
            import torch

            if __name__ == "__main__":
                torch.autograd.set_detect_anomaly(True)  # expect: GPU705
                with torch.autograd.profiler.emit_nvtx():  # expect: GPU705
                    for x, y in loader:
                        loss = criterion(model(x), y)
                        loss.backward()
                        optimizer.step()
            """,
            note="main guard is not a flag",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        trains = None
        for site in model.calls_to(*_SET_ANOMALY):
            arg = call_argument(site.node, "mode", 0)
            if arg is None or literal_bool(arg.value) is not True or _in_test(site) or self._behind_flag(model, site):
                continue
            if trains is None:
                trains = _trains(model) or any(f.direct_marker for f in model.facts.functions.values())
            if not trains:
                continue
            fix = FixSpec("switch anomaly detection off", (NodeEdit(arg.value, "False"),), Applicability.UNSAFE)
            yield self.report(
                site.node,
                "anomaly detection is on for the whole run: every backward records stack traces and checks "
                "for NaN, roughly halving training speed",
                fix=fix,
            )
        for site in model.calls_to(*_ANOMALY_CONTEXT, *_PROFILERS):
            if star_kwargs(site.node):
                continue
            if site.qualname in _PROFILERS:
                enabled = call_argument(site.node, "enabled", 0)
                if enabled is not None and literal_bool(enabled.value) is not True:
                    continue
            if _in_test(site) or self._behind_flag(model, site) or not self._around_training(model, site):
                continue
            what = "anomaly detection" if site.qualname in _ANOMALY_CONTEXT else f"`{site.qualname.rsplit('.', 1)[-1]}`"
            yield self.report(
                site.node,
                f"{what} wraps training code: every operation of every step pays for the debugging records",
            )
        for site in model.calls_to(*_GRADCHECKS):
            if _in_test(site) or not model.in_training_code(site.ctx) or self._behind_flag(model, site):
                continue
            yield self.report(
                site.node,
                f"`{site.qualname.rsplit('.', 1)[-1]}` runs inside training code: it re-evaluates the function "
                "many times in double precision",
            )

    @staticmethod
    def _around_training(model: FileModel, site: CallSite) -> bool:
        if model.in_training_code(site.ctx):
            return True
        if not site.with_item:
            return False
        function = site.ctx.function
        roots: Sequence[cst.CSTNode]
        if function is not None:
            roots = [function.node]
        else:
            roots = [s for s in model.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        for root in roots:
            found = _find_with(root, site.node)
            if found is not None:
                return _block_trains(model, found.body, site.ctx.class_name)
        return False

    @staticmethod
    def _behind_flag(model: FileModel, site: CallSite) -> bool:
        """Under an `if` (or `x if c else y`) whose test is not a constant or the main guard."""
        function = site.ctx.function
        if function is not None:
            roots: Sequence[cst.CSTNode] = [function.node]
        else:  # module-level code only: function and class bodies are not entered
            roots = [s for s in model.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        for root in roots:
            tests = enclosing_tests(root, site.node)
            if tests is not None:
                return any(not (_is_main_guard(t) or _is_constant_true(t)) for t in tests)
        return False


# ==================================================================================================
# GPU706: kernel-shape knobs
# ==================================================================================================

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
            if isinstance(value, (cst.Attribute, cst.Name)) and model.imports.qualify(value) in _HALF_DTYPES:
                return True
            if (
                arg.keyword is not None
                and arg.keyword.value in ("mixed_precision", "precision")
                and isinstance(value, cst.SimpleString)
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
    fixable = "unsafe, for a convolution bias (`bias=False`)"
    requires = (("Linear", "Embedding", "BatchNorm", "foreach"),)

    VALID = [
        Case(
            """
            import torch
            import torch.nn as nn

            model = nn.Sequential(nn.Linear(784, 500), nn.ReLU(), nn.Linear(500, 10)).cuda()
            for x, y in loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="no mixed precision",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Classifier(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone = nn.Sequential(nn.Linear(1024, 512), nn.GELU(), nn.Linear(512, 1001))
                    self.classifier = nn.Linear(512, 1001)
                    self.fc_out = nn.Linear(256, 37)

            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = Classifier().cuda()(x)
            """,
            note="output layers: last of a Sequential, named heads, small class counts",
        ),
        Case(
            """
            import torch.nn as nn

            block = nn.Sequential(
                nn.Conv2d(64, 128, 3, padding=1, bias=False),
                nn.BatchNorm2d(128),
                nn.ReLU(inplace=True),
                nn.Conv2d(128, 128, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.BatchNorm2d(128),
            )
            """,
            note="bias off, or no BatchNorm right after",
        ),
        Case(
            """
            import torch

            optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)
            optimizer2 = torch.optim.SGD(params, lr=0.1, foreach=cfg.foreach)
            sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=100)
            """,
            note="foreach on or configured",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Tiny(nn.Module):
                def __init__(self, vocab, dim):
                    super().__init__()
                    self.emb = nn.Embedding(50257, 768)
                    self.small = nn.Linear(30, 50)
                    self.proj = nn.Linear(dim, 4 * dim)

            model = Tiny(100, 64).cuda().half()
            """,
            note="untied vocabulary, small sizes, sizes from variables",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            from collections import OrderedDict

            stem = nn.Sequential(OrderedDict([("conv", nn.Conv2d(3, 64, 7, 2, 3)), ("bn", nn.BatchNorm2d(64))]))
            layers = [nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64)]
            body = nn.Sequential(*layers)
            """,
            note="not a plain Sequential literal",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class Regressor(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.hidden = nn.Linear(512, 256)
                    self.predict = nn.Linear(256, 100)

            scaler = torch.cuda.amp.GradScaler()
            """,
            note="the last Linear a module builds: its output size is the task's",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            import torch.nn as nn

            class MLP(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(768, 3100)  # expect: GPU706 info
                    self.fc2 = nn.Linear(3100, 768)  # expect: GPU706 info
                    self.head = nn.Linear(768, 1000)

            with torch.autocast("cuda", dtype=torch.float16):
                y = MLP().cuda()(x)
            """,
            note="hidden width under autocast",
        ),
        Case(
            """
            import torch.nn as nn

            def block(cin, cout):
                return nn.Sequential(
                    nn.Conv2d(cin, cout, 3, padding=1),  # expect: GPU706 info
                    nn.BatchNorm2d(cout),
                    nn.ReLU(inplace=True),
                )
            """,
            fixed="""
            import torch.nn as nn

            def block(cin, cout):
                return nn.Sequential(
                    nn.Conv2d(cin, cout, 3, padding=1, bias=False),  # expect: GPU706 info
                    nn.BatchNorm2d(cout),
                    nn.ReLU(inplace=True),
                )
            """,
            note="conv bias cancelled by BatchNorm",
        ),
        Case(
            """
            from torch import nn

            stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=True), nn.SyncBatchNorm(32), nn.SiLU())  # expect: GPU706 info
            """,
            fixed="""
            from torch import nn

            stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.SyncBatchNorm(32), nn.SiLU())  # expect: GPU706 info
            """,
            note="explicit bias=True",
        ),
        Case(
            """
            import torch

            opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, foreach=False)  # expect: GPU706 info
            """,
            note="foreach disabled",
        ),
        Case(
            """
            import torch
            import torch.nn as nn

            class GPT(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.wte = nn.Embedding(50257, 768)  # expect: GPU706 info
                    self.lm_head = nn.Linear(768, 50257, bias=False)
                    self.wte.weight = self.lm_head.weight

            model = GPT().to(device="cuda", dtype=torch.bfloat16)
            """,
            note="tied vocabulary not a multiple of 8",
        ),
        Case(
            """
            import torch
            from torch.nn import Linear, Embedding
            from torch.optim import SGD

            enc = Linear(in_features=100, out_features=256)  # expect: GPU706 info
            pos = Embedding(512, 100)  # expect: GPU706 info
            opt = SGD(enc.parameters(), lr=0.1, momentum=0.9, foreach=False)  # expect: GPU706 info
            scaler = torch.amp.GradScaler("cuda")
            """,
            note="imported names, keyword sizes",
        ),
    ]

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
                    f"`{last}(..., foreach=False)` updates parameters one tensor at a time; the batched "
                    "(foreach) update is the CUDA default (keep False only to save peak memory)",
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
            f"`{kind}` size {shown} under mixed precision: matrix multiplies run well below tensor-core speed",
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
                if isinstance(a.value, cst.Call) and model.imports.qualify(a.value.func) == "torch.nn.Linear"
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
                if not isinstance(conv, cst.Call) or not isinstance(norm, cst.Call):
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
                    f"`{snippet(model, conv.func)}` keeps its bias although the next layer is a BatchNorm, "
                    "which cancels it",
                    fix=FixSpec("pass `bias=False` (changes the state_dict keys)", (edit,), Applicability.UNSAFE),
                )
