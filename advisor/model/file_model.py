"""The per-file model: the recorded facts plus the questions every rule asks of them.

Answers are computed on first use and memoised, so a rule that never asks costs nothing.
"""

from __future__ import annotations

import enum
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
from advisor.model.tensors import is_tensor
from advisor.model.value_flow import ValueFlow
from advisor.model.names import (
    DATALOADER,
    ImportTable,
    dotted_name,
)


class Heat(enum.Enum):
    """How often a statement runs relative to optimizer steps."""

    HOT = "hot"  # every step
    GATED = "gated"  # every step, but under a periodic or rank-0 condition, or cheap (no GPU)


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
        self.statement_orders: Dict[int, int] = {}
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
        model.statement_orders = builder.statement_orders
        return model

    def order_of(self, node: cst.CSTNode) -> float:
        """The source order a node reads its names at: as its innermost statement starts (a
        node the walk did not index, inside a lambda, reads at the end of the file)."""
        statement = self.statement_of.get(id(node))
        order = self.statement_orders.get(id(statement)) if statement is not None else None
        return (1 << 30) if order is None else order + 0.5

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

    def loader_site(self, call: cst.Call) -> Optional[CallSite]:
        """The recorded site of a `DataLoader(...)` call node."""
        sites = self._shared.get("loader-sites")
        if sites is None:
            sites = self._shared["loader-sites"] = {id(s.node): s for s in self.calls_to(DATALOADER)}
        return sites.get(id(call))

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
        """Every assignment to ``name`` in the innermost scope around ``ctx`` that has any, in
        source order, wherever it sits: for questions about the whole scope ("is it ever bound
        to a DataLoader?"). What a given read sees is `reaching`."""
        for scope in self._scopes(name, ctx):
            found = self.facts.assignments.get((scope, name))
            if found:
                return found
        return []

    def reaching(self, name: str, ctx: Context, order: float) -> List[Assignment]:
        """The assignments a read of ``name`` at ``order`` may see (see `Bindings.reaching`)."""
        return self.bindings.reaching(name, ctx, order).assignments

    def reaching_assignment(self, name: str, ctx: Context, order: float) -> Optional[Assignment]:
        """The most recent assignment a read of ``name`` at ``order`` may see: the one that
        dominates it, or the last one made before it."""
        earlier = [a for a in self.reaching(name, ctx, order) if a.order < order]
        return earlier[-1] if earlier else None

    def kinds(self, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> Dict[str, bool]:
        """What an expression holds: {"dataloader", "dist_sampler", "dist_loader", "ddp",
        "scaler", "optimizer", "module"} mapped to whether it holds it on every path."""
        return self.values.ask(KINDS, expr, ctx, order)

    def name_kinds(self, name: str, ctx: Context, order: int, depth: int = 0) -> Dict[str, bool]:
        return self.values.name(KINDS, name, ctx, order)

    # -- tensors ---------------------------------------------------------------------------------
    def is_tensor(self, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> bool:
        """True when the expression is known to evaluate to a torch.Tensor (never a guess)."""
        return is_tensor(self, expr, ctx, self.order_of(expr) if order is None else order)


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
