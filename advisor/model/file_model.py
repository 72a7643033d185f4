"""The per-file model: the recorded facts plus the questions every rule asks of them.

Answers are computed on first use and memoised, so a rule that never asks costs nothing.
"""

from __future__ import annotations

import enum
import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from advisor.config import DEFAULT_TORCH_VERSION
from advisor.model.builder import ModelBuilder
from advisor.model.facts import (
    MODULE_SCOPE,
    Assignment,
    CallSite,
    Context,
    Facts,
    FunctionInfo,
    LoopInfo,
)

from advisor.model.bindings import Bindings
from advisor.model.kinds import KINDS
from advisor.model.value_flow import ValueFlow
from advisor.model.names import (
    ImportTable,
    dotted_name,
)


class Heat(enum.Enum):
    """How often a statement runs relative to optimizer steps."""

    HOT = "hot"  # every step
    GATED = "gated"  # every step, but under a periodic or rank-0 condition, or cheap (no GPU)


# Methods that, called on a tensor, return a tensor.
TENSOR_METHODS = frozenset(
    """detach clone mean sum to cuda float half double bfloat16 long view reshape squeeze unsqueeze
    flatten softmax log_softmax argmax argmin abs sqrt pow exp log norm std var masked_fill
    contiguous permute transpose t sigmoid relu tanh max min prod cumsum expand repeat
    type_as view_as add sub mul div neg exp_ clamp round floor ceil square""".split()
)
# Methods whose result is a Python value: the sync has already happened.
_SCALAR_METHODS = frozenset({"item", "tolist", "numpy", "__len__", "format"})
_SCALAR_FUNCTIONS = frozenset({"float", "int", "bool", "len", "round", "str", "repr"})
_TORCH_TENSOR_FUNCTIONS = frozenset(
    """tensor as_tensor from_numpy zeros ones empty full rand randn randint arange linspace cat stack
    sum mean max min where matmul mm bmm einsum exp log sigmoid softmax log_softmax tanh relu
    argmax argmin clamp abs sqrt norm topk sort gather masked_select nonzero unique cdist
    zeros_like ones_like rand_like randn_like full_like empty_like isnan isinf isfinite any all eq ne
    gt lt ge le allclose equal count_nonzero logical_and logical_or logical_not dot outer""".split()
)
# Qualified functions outside the `torch.` namespace root that return tensors.
_TENSOR_FUNCTIONS = frozenset(
    {
        "torch.nn.utils.clip_grad_norm_",
        "torch.nn.utils.clip_grad.clip_grad_norm_",
        "torch.nn.utils.get_total_norm",
        "torch.linalg.norm",
        "torch.linalg.vector_norm",
        "torch.distributed.nn.all_reduce",
    }
)
_CRITERION_NAME = re.compile(
    r"(criterion|loss_fn|loss_func|lossfn|loss_function|loss_module|^model$|^net$|_model$)", re.IGNORECASE
)
_TENSOR_ATTRIBUTES = frozenset({"loss", "logits", "grad", "data"})
_MAX_DEPTH = 8
# Methods only modules have (optimizers share zero_grad/state_dict, which is harmless here).
_MODULE_METHODS = (
    "parameters", "named_parameters", "modules", "named_modules", "children", "eval", "train",
    "load_state_dict", "register_forward_hook", "requires_grad_",
)


class FileModel:
    def __init__(
        self,
        module: cst.Module,
        facts: Facts,
        imports: ImportTable,
        path: str = "",
        torch_version: Tuple[int, int] = DEFAULT_TORCH_VERSION,
    ) -> None:
        self.module = module
        self.facts = facts
        # node id -> innermost statement, statement id -> its top-level statement (the walk's
        # index; lambda bodies, which the walk skips, are not in it)
        self.statement_of: Dict[int, Optional[cst.CSTNode]] = {}
        self.top_of: Dict[int, cst.CSTNode] = {}
        self.imports = imports
        self.path = path
        self.torch_version = torch_version  # the oldest torch the project supports (configuration)
        self._trains: Dict[str, bool] = {}
        self._has_training_loop: Dict[str, bool] = {}
        self._loop_training: Dict[int, bool] = {}
        self._loop_hot: Dict[int, bool] = {}
        self._function_heat: Dict[str, Optional[Heat]] = {}
        self._methods: Optional[Dict[str, List[FunctionInfo]]] = None
        self._shared: Dict[str, object] = {}
        self._may_use_gpu: Optional[bool] = None
        self._module_names: Optional[Set[str]] = None
        self.bindings = Bindings(facts)
        self.values = ValueFlow(self)

    @classmethod
    def build(
        cls, module: cst.Module, path: str = "", torch_version: Tuple[int, int] = DEFAULT_TORCH_VERSION
    ) -> "FileModel":
        builder = ModelBuilder()
        builder.walk(module)
        model = cls(module, builder.facts, builder.imports, path, torch_version)
        model.statement_of, model.top_of = builder.statement_of or {}, builder.top_of
        return model

    def shared(self, key: str, compute):
        """A fact a family of rules derives from the model, computed once per file."""
        if key not in self._shared:
            self._shared[key] = compute(self)
        return self._shared[key]

    # -- plain lookups ----------------------------------------------------------------------
    def calls_to(self, *qualnames: str) -> List[CallSite]:
        out: List[CallSite] = []
        for name in qualnames:
            out.extend(self.facts.calls_by_qualname.get(name, ()))
        return out

    def method_calls(self, *methods: str) -> List[CallSite]:
        out: List[CallSite] = []
        for name in methods:
            out.extend(self.facts.calls_by_method.get(name, ()))
        return out

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    @property
    def uses_cuda(self) -> bool:
        return self.facts.uses_cuda

    @property
    def may_use_gpu(self) -> bool:
        """False for a whole script (it imports torch) with no sign that tensors leave the CPU: no
        CUDA, no `.to(...)` move, no `device` name, no framework that places tensors. There a
        sync costs next to nothing. Fragments that do not import torch get the benefit of the
        doubt."""
        if self._may_use_gpu is None:
            facts = self.facts
            self._may_use_gpu = (
                not self.imports.imports_any("torch")
                or facts.uses_cuda
                or any(target.startswith("torch.cuda") for target in self.imports.aliases.values())
                or bool(facts.calls_by_method.get("to"))
                or any("device" in name.lower() for _, name in facts.assignments)
                or self.imports.imports_any("accelerate", "lightning", "pytorch_lightning", "deepspeed", "torch_xla")
                or any("device" in (s.receiver_name or "") for s in facts.calls)
            )
        return self._may_use_gpu

    def module_names(self) -> Set[str]:
        """Names used as modules somewhere in the file (`.parameters()`, `.eval()`, ...):
        `model` in `model.eval()`, and in `m.cpu().parameters()`."""
        if self._module_names is None:
            names: Set[str] = set()
            for site in self.method_calls(*_MODULE_METHODS):
                receiver = site.receiver
                # Strip method calls that return the module itself: `m.cpu()`, `m.to(d)`.
                while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
                    receiver = receiver.func.value
                name = dotted_name(receiver) if receiver is not None else None
                if name and name not in ("self", "cls"):
                    names.add(name)
            self._module_names = names
        return self._module_names

    def uses_framework(self, *packages: str) -> bool:
        return self.imports.imports_any(*packages)

    def function(self, key: str) -> Optional[FunctionInfo]:
        return self.facts.functions.get(key)

    # -- training loops -----------------------------------------------------------------------
    def resolve(self, key: str) -> Optional[FunctionInfo]:
        """The function a callee key names: `train_step`, `Trainer.step`, or `.step` for a
        method called on some object, when exactly one class of the file defines it."""
        info = self.facts.functions.get(key)
        if info is not None or "." not in key:
            return info
        if self._methods is None:
            self._methods = {}
            for candidate in self.facts.functions.values():
                if candidate.class_name is not None:
                    self._methods.setdefault(candidate.node.name.value, []).append(candidate)
        found = self._methods.get(key.rsplit(".", 1)[-1], [])
        return found[0] if len(found) == 1 else None

    def call_sites(self, info: FunctionInfo) -> List[CallSite]:
        sites = self.bindings.callers(info)
        if info.class_name is not None and self.resolve("." + info.node.name.value) is info:
            for site in self.facts.calls_by_method.get(info.node.name.value, ()):
                if site.receiver_name not in ("self", "cls") and site.qualname is None:
                    sites.append(site)
        return sites

    def function_trains(self, key: str) -> bool:
        """The function runs backward or an optimizer step, itself or through functions it calls."""
        known = self._trains.get(key)
        if known is not None:
            return known
        self._trains[key] = False  # recursion guard
        info = self.resolve(key)
        result = info is not None and (
            info.direct_marker or any(self.function_trains(c) for c in info.callees)
        )
        self._trains[key] = result
        return result

    def function_has_training_loop(self, key: str) -> bool:
        known = self._has_training_loop.get(key)
        if known is not None:
            return known
        self._has_training_loop[key] = False
        info = self.resolve(key)
        result = info is not None and (
            any(self.is_training_loop(loop) for loop in info.loops)
            or any(self.function_has_training_loop(c) for c in info.callees)
        )
        self._has_training_loop[key] = result
        return result

    def is_training_loop(self, loop: LoopInfo) -> bool:
        known = self._loop_training.get(id(loop))
        if known is None:
            known = loop.direct_marker or any(self.function_trains(c) for c in loop.callees)
            self._loop_training[id(loop)] = known
        return known

    def is_hot_loop(self, loop: LoopInfo) -> bool:
        """The innermost training loop: one iteration per optimizer step."""
        known = self._loop_hot.get(id(loop))
        if known is None:
            # A loop that steps the optimizer in its own body runs once per step even when
            # an inner loop accumulates micro-batches (or trains a GAN critic).
            known = self.is_training_loop(loop) and (
                loop.own_step
                or (
                    not any(self._has_nested_training_loop(child) for child in loop.children)
                    and not any(self.function_has_training_loop(c) for c in loop.callees)
                )
            )
            self._loop_hot[id(loop)] = known
        return known

    def _has_nested_training_loop(self, loop: LoopInfo) -> bool:
        return self.is_training_loop(loop) or any(self._has_nested_training_loop(c) for c in loop.children)

    def epoch_loops(self) -> List[LoopInfo]:
        """Training loops that are not hot: each iteration runs a whole inner training loop."""
        return [loop for loop in self.facts.loops if self.is_training_loop(loop) and not self.is_hot_loop(loop)]

    def enclosing_training_loop(self, ctx: Context) -> Optional[LoopInfo]:
        loop = ctx.loop
        while loop is not None and not self.is_training_loop(loop):
            loop = loop.parent
        return loop

    def sync_heat(self, ctx: Context) -> Optional[Heat]:
        """`heat` for host-device syncs: in a script with no sign of a GPU they cost next to
        nothing, so per-step ones are reported as GATED (info)."""
        heat = self.heat(ctx)
        if heat is Heat.HOT and not self.may_use_gpu:
            return Heat.GATED
        return heat

    def heat(self, ctx: Context) -> Optional[Heat]:
        """Whether code in this context runs on every training step (and whether it is gated)."""
        loop = self.enclosing_training_loop(ctx)
        if loop is not None:
            if not self.is_hot_loop(loop):
                return None
            if ctx.gated or loop.env_step or (ctx.loop is not None and ctx.loop.env_step):
                return Heat.GATED  # RL loops need host values per environment step anyway
            if ctx.no_grad and ctx.loop is not loop:
                return Heat.GATED  # an evaluation loop nested in the training loop
            return Heat.HOT
        if ctx.function is None:
            return None
        heat = self.function_heat(ctx.function.key)
        if heat is None:
            return None
        return Heat.GATED if (ctx.gated or heat is Heat.GATED) else Heat.HOT

    def function_heat(self, key: str) -> Optional[Heat]:
        """A function runs every step when a hot loop (or another hot function) calls it."""
        if key in self._function_heat:
            return self._function_heat[key]
        self._function_heat[key] = None  # recursion guard
        info = self.facts.functions.get(key)
        result: Optional[Heat] = None
        if info is not None and not info.no_grad and not self.function_has_training_loop(key):
            for site in self.call_sites(info):
                if site.ctx.no_grad:
                    continue
                heat = self.heat(site.ctx)
                if heat is Heat.HOT:
                    result = Heat.HOT
                    break
                if heat is Heat.GATED:
                    result = Heat.GATED
        self._function_heat[key] = result
        return result

    @property
    def trains_anywhere(self) -> bool:
        """Some loop or function of the file runs backward or an optimizer step."""
        return any(self.is_training_loop(loop) for loop in self.facts.loops) or any(
            info.direct_marker for info in self.facts.functions.values()
        )

    def in_training_code(self, ctx: Context) -> bool:
        """Inside any training loop, or in a function that trains or runs every step."""
        if self.enclosing_training_loop(ctx) is not None:
            return True
        if ctx.function is None:
            return False
        return self.function_trains(ctx.function.key) or self.function_heat(ctx.function.key) is not None

    # -- what names hold -----------------------------------------------------------------------
    def _scopes(self, name: str, ctx: Context) -> Tuple[str, ...]:
        if name.startswith("self.") and ctx.class_scope:
            return (ctx.class_scope,)
        if ctx.function is not None:
            return (ctx.function.scope, MODULE_SCOPE)
        return (MODULE_SCOPE,)

    def assignments(self, name: str, ctx: Context) -> List[Assignment]:
        """Assignments to ``name`` visible from ``ctx``: the innermost scope that has any."""
        for scope in self._scopes(name, ctx):
            found = self.facts.assignments.get((scope, name))
            if found:
                return found
        return []

    def reaching_assignment(self, name: str, ctx: Context, order: int) -> Optional[Assignment]:
        """The last assignment before ``order`` in the same scope (or the last one elsewhere)."""
        found = self.assignments(name, ctx)
        if not found:
            return None
        same_scope = found[0].ctx.scope == ctx.scope
        if same_scope:
            earlier = [a for a in found if a.order < order]
            return earlier[-1] if earlier else None
        return found[-1]

    def kinds(self, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> Dict[str, bool]:
        """What an expression holds: {"dataloader", "dist_sampler", "dist_loader", "ddp",
        "scaler", "optimizer", "module"} mapped to whether it holds it on every path."""
        return self.values.ask(KINDS, expr, ctx, order)

    def name_kinds(self, name: str, ctx: Context, order: int, depth: int = 0) -> Dict[str, bool]:
        return self.values.name(KINDS, name, ctx, order)

    # -- tensors ---------------------------------------------------------------------------------
    def is_tensor(self, expr: cst.BaseExpression, ctx: Context, depth: int = 0) -> bool:
        """True when the expression is known to evaluate to a torch.Tensor (never a guess)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Name):
            return self._name_is_tensor(expr.value, ctx, depth)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in _TENSOR_ATTRIBUTES:
                return expr.attr.value in ("loss", "logits") or self.is_tensor(expr.value, ctx, depth + 1)
            name = dotted_name(expr)
            return name is not None and name.startswith("self.") and self._name_is_tensor(name, ctx, depth)
        if isinstance(expr, cst.Call):
            return self._call_is_tensor(expr, ctx, depth)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_tensor(expr.left, ctx, depth + 1) or self.is_tensor(expr.right, ctx, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_tensor(expr.expression, ctx, depth + 1)
        if isinstance(expr, cst.Comparison):
            return self.is_tensor(expr.left, ctx, depth + 1) or any(
                self.is_tensor(c.comparator, ctx, depth + 1) for c in expr.comparisons
            )
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value, ctx, depth + 1)
        return False

    def _call_is_tensor(self, call: cst.Call, ctx: Context, depth: int) -> bool:
        func = call.func
        qual = self.imports.qualify(func)
        if qual is not None:
            if qual.startswith("torch.nn.functional.") or qual in _TENSOR_FUNCTIONS:
                return True
            head, _, last = qual.rpartition(".")
            return head == "torch" and last in _TORCH_TENSOR_FUNCTIONS
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in TENSOR_METHODS:
                return self.is_tensor(func.value, ctx, depth + 1)
            if method in _SCALAR_METHODS:
                return False
        name = dotted_name(func)
        if name is None:
            return False
        info = self._callee(func, ctx)
        if info is not None:
            body_ctx = info.body_ctx
            return any(self.is_tensor(value, body_ctx, depth + 1) for value in info.returns)
        if "module" in self.kinds(func, ctx, 1 << 30, depth + 1) or "ddp" in self.kinds(func, ctx, 1 << 30, depth + 1):
            return True
        return bool(_CRITERION_NAME.search(name.rsplit(".", 1)[-1]))

    def _callee(self, func: cst.BaseExpression, ctx: Context) -> Optional[FunctionInfo]:
        """The function of this file a call runs: `helper(...)`, `self.method(...)`, `obj.method(...)`."""
        if isinstance(func, cst.Name):
            return self.facts.functions.get(func.value) if self.imports.qualify(func) is None else None
        if isinstance(func, cst.Attribute):
            receiver = dotted_name(func.value)
            if receiver in ("self", "cls") and ctx.class_name:
                return self.resolve(f"{ctx.class_name}.{func.attr.value}")
            if receiver is not None and self.imports.qualify(func) is None:
                return self.resolve(f".{func.attr.value}")
        return None

    def _name_is_tensor(self, name: str, ctx: Context, depth: int) -> bool:
        if (ctx.scope, name) in self.facts.backward_receivers:
            return True  # it was backpropagated through: a tensor whatever else it is assigned
        found = self.assignments(name, ctx)
        tensor = False
        for assignment in found:
            value = assignment.value
            if value is None:
                if assignment.kind_hint == "batch":
                    tensor = True
                continue
            if assignment.index is not None:
                if isinstance(value, (cst.Tuple, cst.List)) and assignment.index < len(value.elements):
                    value = value.elements[assignment.index].value
                else:
                    continue
            if _is_python_value(value):
                return False  # the name also holds plain numbers or text: do not guess
            if not tensor and self.is_tensor(value, assignment.ctx, depth + 1):
                tensor = True
        if not found and ctx.function is not None and name in ctx.function.params:
            return self._param_is_tensor(name, ctx.function, depth)
        return tensor

    def _param_is_tensor(self, name: str, info: FunctionInfo, depth: int) -> bool:
        position = info.params.index(name)
        if info.class_name is not None:
            position -= 1
        sites = self.call_sites(info)
        if not sites:
            return False
        for site in sites:
            arg = call_argument(site.node, name, position)
            if arg is None or not self.is_tensor(arg.value, site.ctx, depth + 1):
                return False
        return True


def _is_python_value(value: cst.BaseExpression) -> bool:
    """Values that are plain Python numbers or text once computed (a sync already happened)."""
    if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in _SCALAR_METHODS
        if isinstance(func, cst.Name):
            return func.value in _SCALAR_FUNCTIONS
    return False


def call_argument(call: cst.Call, keyword: str, position: Optional[int]) -> Optional[cst.Arg]:
    """The argument passed for a parameter, by keyword or by position (None when absent)."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star == "":
            if position is not None and positional == position:
                return arg
            positional += 1
    return None


def star_kwargs(call: cst.Call) -> List[cst.Arg]:
    return [arg for arg in call.args if arg.star == "**"]


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star == "*" for arg in call.args)


def literal_bool(expr: cst.BaseExpression) -> Optional[bool]:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None
