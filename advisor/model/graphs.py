"""Whether a value carries an autograd graph: a model output, a loss, or anything computed from
one without `.detach()`, `.item()` or a `no_grad` block on the way."""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from advisor.model.facts import Assignment, Context
from advisor.model.kinds import KINDS
from advisor.model.loaders import loop_target_hint
from advisor.model.names import dotted_name
from advisor.model.value_flow import Question, ValueFlow
from advisor.model.vocabulary import SCALAR_BUILTINS, TYPED_TENSOR

# Tensor methods whose result still belongs to the autograd graph of their input.
_KEEPS_GRAPH = frozenset(
    """mean sum cpu to cuda float half double bfloat16 clone view reshape squeeze unsqueeze flatten
    softmax log_softmax abs sqrt pow exp log norm std var contiguous permute transpose t sigmoid
    relu tanh max min prod cumsum expand repeat type_as view_as add sub mul div neg clamp square
    chunk split narrow select masked_fill logsumexp""".split()
)
# Methods whose result has no graph (or is not a tensor at all).
_DROPS_GRAPH = frozenset(
    """detach detach_ item tolist numpy argmax argmin long int bool eq ne gt lt ge le isnan isinf
    numel size dim nonzero""".split()
)
_TORCH_GRAPH_FUNCTIONS = frozenset(
    """stack cat mean sum matmul mm bmm einsum exp log sigmoid softmax log_softmax tanh relu clamp
    abs sqrt norm where logsumexp""".split()
)
# Callables whose output carries a graph by what they are called: models and losses.
_MODEL_CALLEE = re.compile(
    r"(criterion|loss_fn|loss_func|lossfn|loss_function|loss_module|(^|_)(model|net|network|encoder|decoder"
    r"|generator|discriminator|critic|policy|actor|backbone|loss)$|cross_entropy)",
    re.IGNORECASE,
)
_NO_GRAPH_ATTRIBUTES = ("data", "grad", "shape", "dtype", "device")


def _grad_off(ctx: Context) -> bool:
    return ctx.no_grad or (ctx.function is not None and ctx.function.no_grad)


class GraphCarrying(Question[bool]):
    """Some path of the value carries a graph."""

    key = "graph"
    unknown = False

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[bool]:
        if _grad_off(ctx):
            return False
        if type(expr) is cst.Attribute and expr.attr.value in _NO_GRAPH_ATTRIBUTES:
            return False
        if type(expr) in (cst.Name, cst.Attribute, cst.IfExp):
            return None
        if type(expr) is cst.Subscript:
            return flow.ask(self, expr.value, ctx, order)
        if type(expr) is cst.Call:
            return self._call(flow, expr, ctx, order)
        if type(expr) is cst.BinaryOperation:
            return flow.ask(self, expr.left, ctx, order) or flow.ask(self, expr.right, ctx, order)
        if type(expr) is cst.UnaryOperation and not type(expr.operator) is cst.Not:
            return flow.ask(self, expr.expression, ctx, order)
        return False

    def _call(self, flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> Optional[bool]:
        model = flow.model
        func = call.func
        qual = model.imports.qualify(func)
        if qual is not None:
            head, _, last = qual.rpartition(".")
            if qual.startswith("torch.nn.functional.") or (head == "torch" and last in _TORCH_GRAPH_FUNCTIONS):
                return any(self._argument(flow, a.value, ctx, order) for a in call.args)
            found = flow.callee(call, ctx, order)  # a function of another project module
            return None if found is not None and not found[1].no_grad else False
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method in _DROPS_GRAPH:
                return False
            if method in _KEEPS_GRAPH:
                return flow.ask(self, func.value, ctx, order)
        elif type(func) is cst.Name and func.value in SCALAR_BUILTINS:
            return False
        found = flow.callee(call, ctx, order)
        if found is not None:
            return False if found[1].no_grad else None  # what the function returns
        name = dotted_name(func)
        if name is None:
            return False
        kinds = flow.ask(KINDS, func, ctx, order)
        return "module" in kinds or "ddp" in kinds or bool(_MODEL_CALLEE.search(name.rsplit(".", 1)[-1]))

    def _argument(self, flow: ValueFlow, expr, ctx: Context, order: int) -> bool:
        if type(expr) in (cst.List, cst.Tuple):
            return any(flow.ask(self, e.value, ctx, order) for e in expr.elements)
        return flow.ask(self, expr, ctx, order)

    def refine(self, flow: ValueFlow, expr, ctx: Context, order: int, answer: bool) -> bool:
        if not answer and type(expr) is cst.Attribute and not (dotted_name(expr) or "").startswith("self."):
            return flow.ask(self, expr.value, ctx, order)  # `outputs.loss`
        return answer

    def combine(self, answers: Sequence[bool]) -> bool:
        return any(answers)

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> bool:
        return False


GRAPH = GraphCarrying()


def carries_graph(model, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> bool:
    return model.values.ask(GRAPH, expr, ctx, model.order_of(expr) if order is None else order)


# torch functions that make a new tensor, which requires grad only when asked to.
_FACTORIES = frozenset(
    """randn rand randint randn_like rand_like zeros ones empty full zeros_like ones_like empty_like
    full_like arange linspace tensor as_tensor from_numpy eye""".split()
)


# Methods that move, cast or reshape a tensor: the result requires grad only if it did.
_SAME_TENSOR_METHODS = frozenset({"to", "cuda", "cpu", "float", "half", "double", "long", "int", "bool", "contiguous",
                                  "view", "reshape", "unsqueeze", "squeeze", "flatten", "permute", "transpose"})


class FreshTensor(Question[bool]):
    """Every path of the value is a tensor a torch factory made without `requires_grad`, or a
    batch of a DataLoader (moved or cast on the way), so no graph is recorded through it."""

    key = "fresh-tensor"
    unknown = False

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[bool]:
        if type(expr) in (cst.Name, cst.Attribute):
            return None
        if not type(expr) is cst.Call:
            return False
        if any(a.keyword is not None and a.keyword.value == "requires_grad" for a in expr.args):
            return False
        qual = flow.model.imports.qualify(expr.func)
        if qual is not None:
            head, _, last = qual.rpartition(".")
            return (head == "torch" and last in _FACTORIES) or bool(TYPED_TENSOR.fullmatch(qual))
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in _SAME_TENSOR_METHODS:
            return flow.ask(self, func.value, ctx, order)
        return False

    def combine(self, answers: Sequence[bool]) -> bool:
        return bool(answers) and all(answers)

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> bool:
        """A batch a DataLoader yields: new tensors, which never require grad."""
        return loop_target_hint(flow.model, assignment) in ("batch", "loader-batch")


FRESH = FreshTensor()


def fresh_tensor(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """The value is known to be a new tensor that does not require grad."""
    return model.values.ask(FRESH, expr, ctx, order)
