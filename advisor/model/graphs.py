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
            return self._project_call(flow, found, call, ctx, order) if found is not None else False
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
            return self._project_call(flow, found, call, ctx, order)
        name = dotted_name(func)
        if name is None:
            return False
        kinds = flow.ask(KINDS, func, ctx, order)
        return "module" in kinds or "ddp" in kinds or bool(_MODEL_CALLEE.search(name.rsplit(".", 1)[-1]))

    def _project_call(self, flow: ValueFlow, found, call: cst.Call, ctx: Context, order: int) -> Optional[bool]:
        if found[1].no_grad:
            return False
        handed = _handed_back(found[0], found[1], call)
        if handed is not None:
            # `reduce_mean(train_acc, nprocs)`: what this call passes, not what every caller does.
            return flow.ask(self, handed, ctx, order)
        return None  # what the function returns

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

# Steps a helper takes on the tensor it hands back (an all-reduce of a copy, then a division):
# none adds a graph of its own.
_COPIES = frozenset({"clone", "detach", "contiguous", "float", "to"})


def _handed_back(owner, info, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The argument of ``call`` that a helper returns, copied and scaled in place at most
    (`def reduce_mean(tensor, n): rt = tensor.clone(); dist.all_reduce(rt); rt /= n; return
    rt`): whether the result carries a graph is whether that argument does. None for other
    helpers."""
    known = owner.shared("graph-handed-back", lambda m: {})
    key = id(info)
    if key not in known:
        known[key] = _returned_parameter(owner, info)
    found = known[key]
    if found is None:
        return None
    name, position = found
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is None and index == position) or (arg.keyword is not None and arg.keyword.value == name):
            return arg.value
    return None


def _returned_parameter(owner, info):
    """(name, position) of the parameter ``info`` hands back as described in `_handed_back`."""
    sites = info.return_sites
    if len(sites) != 1 or info.class_name is not None or info.generator:
        return None
    value = sites[0].value
    origin = value
    while type(origin) is cst.Call and type(origin.func) is cst.Attribute and origin.func.attr.value in _COPIES:
        origin = origin.func.value
    if type(origin) is not cst.Name:
        return None
    name = origin.value
    if name not in info.params:
        bound = _bindings_back(owner, name, sites[0].ctx, sites[0].order)
        if bound is None:
            return None
        plain = [a for a in bound if not a.augmented]
        if len(plain) != 1 or plain[0].value is None or plain[0].index is not None:
            return None
        source = plain[0].value
        while type(source) is cst.Call and type(source.func) is cst.Attribute and source.func.attr.value in _COPIES:
            source = source.func.value
        if type(source) is not cst.Name or source.value not in info.params:
            return None
        others = set(info.params) - {source.value}
        if any(a.augmented and a.value is not None and _adds_another(a, others) for a in bound):
            return None  # `rt += other`: another input joins the result
        name = source.value
    return name, info.params.index(name)


def _bindings_back(owner, name: str, ctx: Context, order: float):
    """Every binding of ``name`` on the way back from a read, through the in-place steps
    (`rt /= n` is read at its own place to find `rt = tensor.clone()`); None when a path
    leaves the function."""
    out, seen = [], set()
    pending = [(ctx, order)]
    while pending:
        at_ctx, at_order = pending.pop()
        reach = owner.bindings.reaching(name, at_ctx, at_order)
        if not reach.closed or reach.parameter is not None or not reach.assignments:
            return None
        for assignment in reach.assignments:
            if id(assignment) in seen:
                continue
            seen.add(id(assignment))
            out.append(assignment)
            if assignment.augmented:
                if len(seen) > 8:
                    return None
                pending.append((assignment.ctx, assignment.order - 0.5))
    return out


def _adds_another(assignment, names) -> bool:
    """The in-place step reads another of ``names`` (parameters) into the result (`rt +=
    other`). A scaling step (`rt /= nprocs`, `*=`) divides by the count a reduce helper is
    handed, and does not count."""
    statement = assignment.statement
    if type(statement) is cst.AugAssign and type(statement.operator) in (cst.DivideAssign, cst.MultiplyAssign,
                                                                          cst.FloorDivideAssign):
        return False
    stack = [assignment.value]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name and node.value in names:
            return True
        stack.extend(node.children)
    return False


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
