"""Tensors: whether a value is one (never a guess), whether it sits in host memory, whether it
comes from NumPy.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterator, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.model.containers import DICT_CONTENTS, LIST_ITEMS, PRESENT, builds_list, every_value, list_elements, lookup
from advisor.model.devices import device_kind, is_dtype, moves_to_device, names_host_device
from advisor.model.facts import Assignment, Context, LoopInfo
from advisor.model.in_place_moves import moved_in_place
from advisor.model.kinds import KINDS
from advisor.model.literals import literal_values
from advisor.model.loaders import LOADERS, RAW_LOADERS, loaders_drawn, loop_target_hint, owner_of, placed_by_framework
from advisor.model.names import dotted_name
from advisor.model.paths import conditions
from advisor.model.type_tests import annotated_kind, annotated_python, python_scalar_here, used_as_text
from advisor.model.value_flow import Question, ValueFlow, argument, comprehension_reads
from advisor.model.vocabulary import SCALAR_BUILTINS, TENSOR_METHODS, TYPED_CONSTRUCTORS

TENSOR, PYTHON, UNKNOWN = "tensor", "python", ""

# Methods whose result is a plain Python value: the sync has already happened.
SCALAR_METHODS = frozenset({"item", "tolist", "numpy", "__len__", "format"})
# Methods of text: what they give is text (or a list of it), never a tensor.
# (`split` is left out: a tensor has one too, `q, k, v = qkv.split(n, dim=2)`.)
_TEXT_METHODS = frozenset({
    "strip", "lstrip", "rstrip", "lower", "upper", "splitlines", "encode", "startswith", "endswith", "casefold",
    "title",
})
# Predicates, reductions and casts that return tensors too.
_PREDICATE_METHODS = frozenset(
    "any all isnan isinf isfinite logical_not logical_and logical_or eq ne gt lt ge le bool int".split()
)
# Products and elementwise maths: a tensor's gives a tensor (`y_hat_feats[i].dot(y_feats[i])`);
# NumPy arrays have some of these names too, so the receiver decides, as for every method here.
_MATH_METHODS = frozenset(
    "dot matmul mm bmm mv outer inner cross kron addmm baddbmm log1p expm1 reciprocal sin cos maximum minimum".split()
)
_TENSOR_RESULT_METHODS = TENSOR_METHODS | _PREDICATE_METHODS | _MATH_METHODS
_TORCH_TENSOR_FUNCTIONS = frozenset(
    """tensor as_tensor from_numpy zeros ones empty full rand randn randint arange linspace cat stack
    sum mean max min where matmul mm bmm einsum exp log sigmoid softmax log_softmax tanh relu
    argmax argmin clamp abs sqrt norm topk sort gather masked_select nonzero unique cdist
    zeros_like ones_like rand_like randn_like full_like empty_like isnan isinf isfinite any all eq ne
    gt lt ge le allclose equal count_nonzero logical_and logical_or logical_not dot outer
    cartesian_prod cumsum cumprod flip roll tril triu diag diagonal bucketize searchsorted multinomial
    repeat_interleave index_select masked_fill narrow take minimum maximum logsumexp rsqrt
    Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor CharTensor
    ByteTensor BoolTensor""".split()
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
        "torch.autograd.Variable",  # hands back the tensor it wraps
        "torch.autograd.variable.Variable",
    }
)
# Functions and methods whose result unpacks into tensors.
_SPLITTING_FUNCTIONS = frozenset(
    """torch.chunk torch.split torch.tensor_split torch.unbind torch.sort torch.topk torch.meshgrid torch.max
    torch.min torch.median torch.mode torch.kthvalue torch.aminmax""".split()
)
_SPLITTING_METHODS = frozenset("chunk split tensor_split unbind sort topk max min median mode kthvalue aminmax".split())
# Callables whose result is a tensor by what they are called: losses and models (`criterion`,
# `teacher_model`); not the helpers that act on a model (`load_model(path)` returns what the
# checkpoint held, `build_model(cfg)` a module).
CRITERION_NAME = re.compile(
    r"^(?!(?:load|save|build|get|create|init|make|setup|prepare|restore|resume|export|freeze|wrap|update|set|"
    r"copy|reset|swap|sync|convert|download|compile|print|log|average)_)"
    r".*?(criterion|loss_fn|loss_func|lossfn|loss_function|loss_module|^model$|^net$|_model$)", re.IGNORECASE
)
_TENSOR_ATTRIBUTES = ("loss", "logits")
# Factories that, without `device=`, build a tensor in host memory.
HOST_FACTORIES = frozenset(
    "tensor as_tensor from_numpy zeros ones empty full rand randn randint randperm arange linspace".split()
)


_LOSS_NAME = re.compile(r"(^|_)loss(es)?(_|$)", re.IGNORECASE)


def _old_item(expr: cst.Subscript) -> bool:
    """`loss.data[0]`: before PyTorch 0.4 a loss was a one-element tensor and this read its number
    (the old `.item()`); on a loss today it would fail, so code that does it means the number."""
    value = expr.value
    if not (type(value) is cst.Attribute and value.attr.value == "data") or len(expr.slice) != 1:
        return False
    index = expr.slice[0].slice
    if not (type(index) is cst.Index and type(index.value) is cst.Integer and index.value.value == "0"):
        return False
    name = dotted_name(value.value)
    return name is not None and bool(_LOSS_NAME.search(name.rsplit(".", 1)[-1]))


class Tensor(Question[str]):
    """TENSOR when some path gives a tensor and none a plain Python value (text, `.item()`,
    `float(...)`): a name that also holds Python values is never taken for a tensor."""

    key = "tensor"
    unknown = UNKNOWN
    none_means_absent = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[str]:
        if type(expr) is cst.Name:
            if python_scalar_here(expr.value, ctx, flow.model):
                return PYTHON  # the `else` of `if not isinstance(flow, float):`
            if used_as_text(flow.model, expr.value, ctx):
                return PYTHON  # `name.split('_')` in the same function: a task name, not a tensor
            annotated = annotated_kind(flow, expr.value, ctx, order)
            if annotated in ("scalar", "container", "tensor-container"):
                # a parameter `n: int`, or `losses: Mapping[str, Tensor]`: its truth is Python's
                return PYTHON
            if annotated == "tensor":
                return TENSOR  # `x: torch.Tensor`
            if (ctx.scope, expr.value) in backpropagated(flow.model):
                # Backpropagated through: a tensor whatever else it is assigned, unless every
                # binding the read sees made it a Python value (`loss = loss.item()` after the
                # backward).
                return PYTHON if self._rebound_to_python(flow, expr.value, ctx, order) else TENSOR
            return None
        if type(expr) in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
            return PYTHON
        if type(expr) is cst.Attribute:
            attr = expr.attr.value
            if attr in _TENSOR_ATTRIBUTES and not (type(expr.value) is cst.Name and expr.value.value == "self"):
                # `outputs.loss`, `out.logits`; an object's own `self.loss` is what its methods
                # store there (a running sum of the floats a callback is handed, or a criterion).
                return TENSOR
            if attr in ("grad", "data", "T", "mT"):
                return self._tensor_of(flow, expr.value, ctx, order)
            name = dotted_name(expr)
            return None if name is not None and name.startswith("self.") else UNKNOWN
        if type(expr) is cst.Call:
            return self._call(flow, expr, ctx, order)
        if type(expr) is cst.BinaryOperation:
            if type(expr.operator) is cst.Modulo and type(expr.left) in (
                    cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
                return PYTHON  # `"%.2f" % acc`: text, whatever it formats
            return self._either(flow, (expr.left, expr.right), ctx, order)
        if type(expr) is cst.UnaryOperation:
            if type(expr.operator) is cst.Not:
                return PYTHON
            return self._tensor_of(flow, expr.expression, ctx, order)
        if type(expr) is cst.Comparison:
            operands = (expr.left, *(c.comparator for c in expr.comparisons))
            if any(type(o) in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString) for o in operands):
                return PYTHON  # `args.optim.loss == 'l1'`: a setting compared with text, never a tensor
            if any(type(o) is cst.Name and o.value == "None" for o in operands) or any(
                type(c.operator) in (cst.Is, cst.IsNot) for c in expr.comparisons
            ):
                return PYTHON  # `x != None`, `x is not None`: Python decides, the device is not read
            return self._either(flow, operands, ctx, order)
        if type(expr) is cst.Subscript:
            if _old_item(expr):
                return PYTHON
            if type(expr.value) is cst.Name and annotated_python(flow, expr.value.value, ctx, order, element=True):
                return PYTHON  # `num_objects[b]` of a parameter `num_objects: List[int]`
            if type(expr.value) is cst.Name and annotated_kind(flow, expr.value.value, ctx, order) == "tensor-container":
                return TENSOR  # `losses["box"]` of a parameter `losses: Dict[str, Tensor]`
            items = _list_item(flow, expr, ctx, order) or _dict_item(flow, expr, ctx, order)
            if items:
                # `parts[i]` of a list of tensors, `inputs["masked_ids"]` of a dict built of them
                return self._tensor_of_all(items, None)
            if flow.ask(self, expr.value, ctx, order) == TENSOR or _device_index(flow, expr, ctx, order):
                return TENSOR
            return UNKNOWN
        if type(expr) is cst.IfExp:
            return None
        return UNKNOWN

    def _rebound_to_python(self, flow: ValueFlow, name: str, ctx: Context, order: int) -> bool:
        reach = flow.bindings.reaching(name, ctx, order)
        if not reach.closed or reach.parameter is not None or not reach.assignments:
            return False
        return all(flow.assigned(self, a, None) == PYTHON for a in reach.assignments)

    def _tensor_of_all(self, items, index: Optional[int]) -> str:
        answers = [v.flow.ask(self, v.expr, v.ctx, v.order, index) for v in items]
        return TENSOR if all(a == TENSOR for a in answers) else UNKNOWN

    def _tensor_of(self, flow: ValueFlow, expr, ctx: Context, order: int) -> str:
        return TENSOR if flow.ask(self, expr, ctx, order) == TENSOR else UNKNOWN

    def _either(self, flow: ValueFlow, operands, ctx: Context, order: int) -> str:
        return TENSOR if any(flow.ask(self, o, ctx, order) == TENSOR for o in operands) else UNKNOWN

    def _call(self, flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> Optional[str]:
        model = flow.model
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "apply" and any(
                info.node.name.value == "forward" for _, info in model.calls.targets_of_expression(call, ctx, order)):
            return TENSOR  # `AllReduce.apply(acc)`: a project autograd Function hands back tensors
        qual = model.imports.qualify(func)
        if qual is not None:
            if qual.startswith("torch.nn.functional._"):
                # Its private helpers hand back Python values (`F._Reduction.get_enum(reduction)`
                # is an int, `F._pair(k)` a tuple).
                return UNKNOWN
            if qual.startswith("torch.nn.functional.") or qual in _TENSOR_FUNCTIONS:
                return TENSOR
            head, _, last = qual.rpartition(".")
            if head == "torch" and last in _TORCH_TENSOR_FUNCTIONS:
                return TENSOR
            found = flow.callee(call, ctx, order)
            if found is None:
                return UNKNOWN
            return _predicate_of_argument(self, flow, found[1], call, ctx, order)  # another project module's
        if type(func) is cst.Name and func.value in SCALAR_BUILTINS and not flow.function_called(call, ctx, order):
            return PYTHON
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method in SCALAR_METHODS or method in _TEXT_METHODS:
                return PYTHON
            if method in ("cuda", "to") and moves_to_device(model, call, ctx, order) and _names_cuda(model, call, ctx, order):
                # `batch["labels"].cuda()`: a field of a batch, moved to the device; `targets.to(device)`
                # where `for imgs, targets, paths in pbar` is the training loop around it.
                if type(func.value) is cst.Subscript or _training_batch_part(model, func.value, ctx, order):
                    return TENSOR
                if _loader_item_part(model, func.value, ctx, order):
                    return TENSOR
                if method == "cuda" and type(func.value) is cst.Call and flow.drawn_from(func.value, ctx, order) is not None:
                    return TENSOR  # `model(next(batches).cuda())`: an item drawn and moved (a dict has no `.cuda()`)
            if method in ("detach", "detach_") and not call.args:
                # Only a tensor has `detach()` (NumPy arrays and modules have none): whatever
                # the receiver is (`float(losses.global_loss.detach())` of a result record),
                # unless the flow knows it for a Python value.
                return PYTHON if flow.ask(self, func.value, ctx, order) == PYTHON else TENSOR
            if method in _TENSOR_RESULT_METHODS or (method.endswith("_") and method[:-1] in _TENSOR_RESULT_METHODS):
                return self._tensor_of(flow, func.value, ctx, order)  # `x.clamp_(0, n)` too
            if method == "cpu":
                # `hits.sum().cpu()`: still a tensor, now in host memory (a module's `.cpu()` is
                # not asked about here: its receiver is no tensor)
                return self._tensor_of(flow, func.value, ctx, order)
        local = flow.function_called(call, ctx, order)
        if local is not None:
            return _predicate_of_argument(self, flow, local, call, ctx, order)  # what the function of this file returns
        name = dotted_name(func)
        if name is None:
            return UNKNOWN
        kinds = flow.ask(KINDS, func, ctx, order)
        if "module" in kinds or "ddp" in kinds or CRITERION_NAME.search(name.rsplit(".", 1)[-1]):
            return TENSOR
        return UNKNOWN

    def element(self, flow: ValueFlow, expr, index: int, ctx: Context, order: int) -> Optional[str]:
        """`pos, neg = torch.chunk(mask, 2)`, `x0, y0 = boxes.T`, `values, idx = scores.topk(k)`:
        the parts of a tensor split, unbound or sorted are tensors."""
        if type(expr) is cst.Subscript:
            items = _list_item(flow, expr, ctx, order)  # `b, a = indices[i]`, a list of tuples
            return self._tensor_of_all(items, index) if items else None
        if type(expr) is cst.Name:
            # `acc1, acc5 = accuracy(...)` where the helper returns `res`, a list it appended
            # tensors to: an element of such a list is a tensor.
            known, items = flow.ask(LIST_ITEMS, expr, ctx, order)
            if known and items:
                return self._tensor_of_all(items, None)
        if type(expr) is cst.Attribute and expr.attr.value == "saved_tensors":
            return TENSOR  # `x, w = ctx.saved_tensors` in an autograd Function's backward
        if type(expr) is cst.Call:
            # `preds, preds_fp = model(x, True)`: what the one project `forward` the call runs
            # returns there (`return out, out_fp`).
            targets = flow.model.calls.targets_of_expression(expr, ctx, order)
            if len(targets) == 1 and targets[0][1].node.name.value == "forward":
                owner, info = targets[0]
                if flow.returned(self, info, index, owner) == TENSOR:
                    return TENSOR
            elif not targets and flow.callee(expr, ctx, order) is None and self._module_call(flow, expr, ctx, order):
                # `boxes, scores = detector(images.cuda())` through a module whose `forward` is not
                # the project's (a library model): the parts of what a module returns are tensors,
                # as the whole is when it is not unpacked.
                return TENSOR
        whole = split_tensor(flow.model, expr)
        if whole is None:
            return None
        if whole is expr:
            return TENSOR  # `torch.chunk(...)`: tensors whatever it was given
        return TENSOR if flow.ask(self, whole, ctx, order) == TENSOR else None

    @staticmethod
    def _module_call(flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> bool:
        """A call of a module object (`model(x)`, a DDP wrapper), not of a function or class."""
        if flow.model.imports.qualify(call.func) is not None or flow.function_called(call, ctx, order) is not None:
            return False
        if dotted_name(call.func) is None:
            return False
        kinds = flow.ask(KINDS, call.func, ctx, order)
        return "module" in kinds or "ddp" in kinds

    def combine(self, answers: Sequence[str]) -> str:
        if PYTHON in answers:
            return PYTHON
        return TENSOR if TENSOR in answers else UNKNOWN

    def combine_callers(self, answers: Sequence[str]) -> str:
        if PYTHON in answers:
            return PYTHON
        return TENSOR if all(a == TENSOR for a in answers) else UNKNOWN

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> str:
        if loop_target_hint(flow.model, assignment) == "batch" or _parameter_target(assignment):
            return TENSOR
        held = _container_iterated(flow.model, assignment)
        if type(held) is cst.Name and annotated_kind(flow, held.value, assignment.ctx, assignment.order) == "tensor-container":
            return TENSOR  # `for name, value in losses.items()` of `losses: Mapping[str, Tensor]`
        return TENSOR if iterated_items(flow, assignment, self) == [TENSOR] else UNKNOWN

    def drawn(self, flow: ValueFlow, call: cst.Call, ctx: Context, order: int, index: Optional[int]) -> Optional[str]:
        # `x, y = next(it)` over a loader: unpacked like `for x, y in loader`, the parts are tensors.
        if index is not None and loaders_drawn(flow.model, call, RAW_LOADERS)[0]:
            return TENSOR
        # `model(next(train_loader))`: a whole batch handed to a module, as a loop's batch is.
        if index is None and _module_argument(flow.model, call) and loaders_drawn(flow.model, call)[0]:
            return TENSOR
        return None

    def augmented(self, flow: ValueFlow, assignment: Assignment, before: str, value: str) -> str:
        # `loss = 0; loss += v["loss"]`: a number plus something unknown may be a tensor.
        if TENSOR in (before, value):
            return TENSOR
        return PYTHON if before == PYTHON and value == PYTHON else UNKNOWN


def _parameter_target(assignment: Assignment) -> bool:
    """`p` in `for p in model.parameters():` or `for name, p in model.named_parameters():`."""
    source = assignment.iterable
    if assignment.value is not None or type(source) is not cst.Call or type(source.func) is not cst.Attribute:
        return False
    method = source.func.attr.value
    if method in ("parameters", "buffers"):
        return assignment.index is None
    return method in ("named_parameters", "named_buffers") and assignment.index == 1


def _module_argument(model, call: cst.Call) -> bool:
    """``call`` is the first positional argument of a call of a module instance (`model(...)`)."""
    site = model.site_of(call)
    outer = site.outer if site is not None else None
    if outer is None or not outer.node.args or outer.node.args[0].value is not call:
        return False
    kinds = model.kinds(outer.node.func, outer.ctx, outer.order)
    return "module" in kinds or "ddp" in kinds


def iterated_source(model, assignment: Assignment) -> Optional[cst.BaseExpression]:
    """What a loop target takes its items from: `xs` for `for x in xs`, `ys` for `y` in `for x,
    y in zip(xs, ys)` or `for i, y in enumerate(ys)`. None for anything else (an index of
    `enumerate`, a whole `zip` tuple, a call the analysis does not know)."""
    source, index = assignment.iterable, assignment.index
    if source is None or assignment.value is not None:
        return None
    while type(source) is cst.Call and type(source.func) is cst.Name and model.imports.qualify(source.func) is None:
        args = source.args
        if any(a.keyword is not None or a.star for a in args):
            return None
        if source.func.value == "enumerate" and len(args) == 1 and index == 1:
            source, index = args[0].value, None  # `for i, x in enumerate(xs)`: x; i is a count
        elif source.func.value == "zip" and index is not None and index < len(args):
            source, index = args[index].value, None
        else:
            return None
    return source if index is None or not type(source) is cst.Call else None


def _zipped_parts(model, assignment: Assignment) -> tuple:
    """The sequences a nested loop target takes its items from, when the facts cannot say which
    one (`t1` in `for i, (t1, t2) in enumerate(zip(xs, ys))`): all of the zip's arguments."""
    source, index = assignment.iterable, assignment.index
    if source is None or assignment.value is not None or type(source) is not cst.Call:
        return ()
    if (type(source.func) is cst.Name and source.func.value == "enumerate" and index == 1 and len(source.args) == 1
            and model.imports.qualify(source.func) is None):
        source = source.args[0].value
    if not (type(source) is cst.Call and type(source.func) is cst.Name and source.func.value == "zip"
            and model.imports.qualify(source.func) is None):
        return ()
    if any(a.keyword is not None or a.star for a in source.args):
        return ()
    return tuple(a.value for a in source.args)


def iterated_items(flow: ValueFlow, assignment: Assignment, question: Question) -> list:
    """The distinct answers of ``question`` for the items a loop target is bound to, when the
    source is known (see `iterated_source`): a tensor iterated gives its rows, with the tensor's
    own answer; a list or tuple display, or a list built in steps, gives its elements (one
    answer each). [] when the source or any of its elements is not known."""
    ctx, order = assignment.ctx, assignment.order
    held = _dict_values(flow, assignment)
    if held:
        return sorted({v.flow.ask(question, v.expr, v.ctx, v.order) for v in held}, key=repr)
    receiver = _dict_receiver(assignment)
    if receiver is not None and flow.ask(TENSORS, receiver, ctx, order) == TENSOR:
        # `for name, value in losses.items()` where `losses = model(images, targets)`: what a
        # module hands back and the code walks as a dict holds its tensors.
        return [flow.ask(question, receiver, ctx, order)]
    source = iterated_source(flow.model, assignment)
    if source is None:
        return []
    built = _comprehension_results(flow, source, ctx, order)
    if built:
        return sorted({flow.ask(question, e, c, o) for e, c, o in built}, key=repr)
    if type(source) in (cst.List, cst.Tuple):
        if not source.elements or any(type(e) is cst.StarredElement for e in source.elements):
            return []
        return sorted({flow.ask(question, e.value, ctx, order) for e in source.elements}, key=repr)
    if flow.ask(TENSORS, source, ctx, order) == TENSOR:
        return [flow.ask(question, source, ctx, order)]  # the rows of a tensor
    known, values = flow.ask(LIST_ITEMS, source, ctx, order)
    if not known or not values:
        return []
    return sorted({v.flow.ask(question, v.expr, v.ctx, v.order) for v in values}, key=repr)


def _dict_receiver(assignment: Assignment) -> Optional[cst.BaseExpression]:
    """`d` when a loop target takes the values of a dict: `v` in `for v in d.values()` or `for
    k, v in d.items()`; None otherwise."""
    source, index = assignment.iterable, assignment.index
    if assignment.value is not None or not type(source) is cst.Call or source.args:
        return None
    func = source.func
    if not type(func) is cst.Attribute or (func.attr.value, index) not in (("values", None), ("items", 1)):
        return None
    return func.value


def _container_iterated(model, assignment: Assignment) -> Optional[cst.BaseExpression]:
    """What a loop target takes its items from, a dict's values included (`losses` for `v` in
    `for k, v in losses.items()`, `feats` for `for f in feats`); None when not known."""
    return _dict_receiver(assignment) or iterated_source(model, assignment)


def _dict_values(flow: ValueFlow, assignment: Assignment) -> tuple:
    """The values a loop target takes from a dict whose every value is known: `v` in `for v in
    d.values()` or `for k, v in d.items()`; () otherwise."""
    receiver = _dict_receiver(assignment)
    if receiver is None:
        return ()
    values, complete = every_value(flow.ask(DICT_CONTENTS, receiver, assignment.ctx, assignment.order))
    return values if complete else ()


def _comprehension_results(flow: ValueFlow, source, ctx: Context, order: int) -> list:
    """(element, ctx, order) of the list comprehensions a source is, or a name is only bound to
    (`ids = [x[m] for x, m in pairs]`); [] when it is anything else on some path."""
    if type(source) in (cst.ListComp, cst.GeneratorExp):
        return [(source.elt, ctx, order)]
    if not type(source) is cst.Name:
        return []
    reach = flow.bindings.reaching(source.value, ctx, order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return []
    found = []
    for a in reach.assignments:
        if a.index is not None or a.augmented or not type(a.value) in (cst.ListComp, cst.GeneratorExp):
            return []
        found.append((a.value.elt, a.ctx, a.order))
    return found


def loop_sources(model, name: cst.Name, ctx: Context, order: int) -> list:
    """(source, ctx, order) for each item a read of a loop or comprehension target comes from
    (`masks` for `m` in `[x[m] for x, m in zip(xs, masks)]`, see `iterated_source`); [] when
    some binding that reaches the read is anything else."""
    bound = model.shared("comprehension-reads", comprehension_reads).get(id(name))
    if bound is not None:
        target, index, iterable = bound
        source = iterated_source(model, Assignment(target, None, ctx, order, index, "loop-target", iterable=iterable))
        return [] if source is None else [(source, ctx, order)]
    reach = model.bindings.reaching(name.value, ctx, order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return []
    found = []
    for a in reach.assignments:
        source = iterated_source(model, a)
        if source is None:
            return []
        found.append((source, a.ctx, a.order))
    return found


def _list_item(flow: ValueFlow, expr: cst.Subscript, ctx: Context, order: int) -> tuple:
    """The values `parts[i]` may be, when `parts` is a list whose items are all known (one
    plain index, not a slice); () otherwise."""
    if len(expr.slice) != 1 or not type(expr.slice[0].slice) is cst.Index:
        return ()
    known, values = flow.ask(LIST_ITEMS, expr.value, ctx, order)
    return values if known else ()


def _dict_item(flow: ValueFlow, expr: cst.Subscript, ctx: Context, order: int) -> tuple:
    """The values `inputs["masked_ids"]` may be, when `inputs` is a dict the program builds and
    the key is written in place and present on every path; () otherwise."""
    if len(expr.slice) != 1 or not type(expr.slice[0].slice) is cst.Index:
        return ()
    key = expr.slice[0].slice.value
    if type(key) is not cst.SimpleString or type(expr.value) is not cst.Name:
        return ()
    text = key.evaluated_value
    if not isinstance(text, str):
        return ()
    state, values = lookup(flow.ask(DICT_CONTENTS, expr.value, ctx, order), ("str", text))
    return values if state == PRESENT else ()


def _device_index(flow: ValueFlow, expr: cst.Subscript, ctx: Context, order: int) -> bool:
    """`anchors[level][keep]` where `keep` is a tensor on the device (a tensor not known to be
    in host memory nor a batch still there): only a tensor on that device can be indexed by it
    (a list wants a Python integer, NumPy a host array), so the result is a tensor whatever the
    analysis knows of what is indexed."""
    for element in expr.slice:
        if not type(element.slice) is cst.Index:
            continue
        value = element.slice.value
        if flow.ask(TENSORS, value, ctx, order) != TENSOR:
            continue
        if flow.ask(HOST_TENSOR, value, ctx, order) or flow.ask(RAW_BATCH, value, ctx, order):
            continue
        if flow.ask(NUMPY, expr.value, ctx, order):
            continue
        return True
    return False


def split_tensor(model, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """For an expression whose parts are tensors when what it splits is one: what it splits
    (`boxes` in `boxes.T`, `scores.topk(k)`, `torch.chunk(mask, 2)`). The call itself for a torch
    function (its parts are tensors whatever it was given); None for anything else."""
    if type(expr) is cst.Attribute and expr.attr.value in ("T", "mT"):
        return expr.value
    if not type(expr) is cst.Call:
        return None
    qual = model.imports.qualify(expr.func)
    if qual is not None:
        return expr if qual in _SPLITTING_FUNCTIONS else None
    func = expr.func
    if type(func) is cst.Attribute and func.attr.value in _SPLITTING_METHODS:
        return func.value
    return None


def _names_cuda(model, call: cst.Call, ctx: Context, order: int) -> bool:
    if type(call.func) is cst.Attribute and call.func.attr.value == "cuda":
        return True
    target = argument(call, "device", 0)
    return target is not None and device_kind(model, target.value, ctx, order) == "cuda"


def _training_batch_part(model, expr: cst.BaseExpression, ctx: Context, order: int) -> bool:
    """A name bound only as a part of the unpacked item of the training loop around ``ctx``
    (`targets` in `for i, (imgs, targets, paths) in pbar`), even where the analysis cannot
    tell that `pbar` holds a loader."""
    if not type(expr) is cst.Name:
        return False
    loop = model.enclosing_training_loop(ctx)
    if loop is None or not type(loop.node) is cst.For:
        return False
    bound = model.shared("comprehension-reads", comprehension_reads).get(id(expr))
    if bound is not None:
        # `t` in `tuple(t.to(device) for t in batch)`: an item of the loop's batch.
        iterable = bound[2]
        return type(iterable) is cst.Name and _bound_to_batch_part(model, iterable.value, ctx, order, loop, 1)
    return _bound_to_batch_part(model, expr.value, ctx, order, loop, 0)


def _loader_item_part(model, expr: cst.BaseExpression, ctx: Context, order: int) -> bool:
    """`t` in `tuple(t.to(device) for t in batch)`, where `batch` is only ever the item of a
    loop over a loader (an evaluation loop's too): a part of a batch, moved to the device."""
    bound = model.shared("comprehension-reads", comprehension_reads).get(id(expr)) if type(expr) is cst.Name else None
    if bound is None or type(bound[2]) is not cst.Name:
        return False
    reach = model.bindings.reaching(bound[2].value, ctx, order)
    return reach.closed and reach.parameter is None and bool(reach.assignments) and all(
        a.value is None and loop_target_hint(model, a) in ("batch", "loader-batch") for a in reach.assignments)


def _bound_to_batch_part(model, name: str, ctx: Context, order: int, loop: LoopInfo, depth: int) -> bool:
    """``name`` is bound only to the training loop's item or a part of it (`batch` of `for i,
    batch in enumerate(loader)`, or `bboxes = batch[1]`)."""
    reach = model.bindings.reaching(name, ctx, order)
    if not (reach.closed and reach.parameter is None and reach.assignments):
        return False
    for a in reach.assignments:
        if a.value is None:
            # the item itself (`batch`), whose part is taken, may be a tuple of tensors
            whole = depth > 0 and a.kind_hint == "loader-batch"
            if not ((a.batch_hint == "batch" or whole) and a.iterable is loop.node.iter):
                return False
        elif depth == 0 and type(a.value) is cst.Name and a.index is not None and not a.augmented:
            # `images, labels = batch`: a piece of the loop's item, unpacked in the body
            if not _bound_to_batch_part(model, a.value.value, a.ctx, a.order, loop, depth + 1):
                return False
        elif (depth > 0 or type(a.value) is not cst.Subscript or type(a.value.value) is not cst.Name
              or a.index is not None):
            return False
        elif not _bound_to_batch_part(model, a.value.value.value, a.ctx, a.order, loop, depth + 1):
            return False
    return True


TENSORS = Tensor()


def is_python_value(model, expr: cst.BaseExpression, ctx: Context, order: int = 1 << 30) -> bool:
    """The expression is known to evaluate to a plain Python value (text, a number, `.item()`)."""
    return model.values.ask(TENSORS, expr, ctx, order) == PYTHON


def is_tensor(model, expr: cst.BaseExpression, ctx: Context, order: int = 1 << 30) -> bool:
    """The expression is known to evaluate to a torch.Tensor (never a guess)."""
    return model.values.ask(TENSORS, expr, ctx, order) == TENSOR


def value_chain(model, expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The nodes from an expression back to the start of its method chain, both included: `x`
    in `x[m].float().mean()`, stopping at a call of an imported function (`torch.rand(1)`)."""
    while True:
        yield expr
        if type(expr) is cst.Call:
            if model.imports.qualify(expr.func) is not None or not type(expr.func) is cst.Attribute:
                return
            expr = expr.func.value
        elif type(expr) in (cst.Attribute, cst.Subscript):
            expr = expr.value
        elif type(expr) in (cst.Comparison, cst.BinaryOperation):
            expr = expr.left
        elif type(expr) is cst.UnaryOperation:
            expr = expr.expression
        else:
            return


def value_root(model, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The start of a method chain (`x` in `x[m].float().mean()`, `torch.rand(1)`)."""
    for node in value_chain(model, expr):
        pass
    return node


def _moved(model, expr: cst.BaseExpression) -> bool:
    """The method chain moves the value (`torch.cat(parts).cuda()`, `(torch.ones(n) * i).to(d)`,
    `y_true.type_as(x)` to the place of another tensor); `.to(torch.int32)` only changes the
    dtype."""
    return any(
        type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("cuda", "to", "type_as")
        and model.imports.qualify(node.func) is None
        and not (node.func.attr.value == "to" and len(node.args) == 1 and is_dtype(model, node.args[0].value))
        and not (node.func.attr.value == "type_as" and (not node.args or host_factory(model, node.args[0].value)))
        for node in value_chain(model, expr)
    )


# torch functions whose result is not on the device of their first argument.
_PLACING = frozenset({"torch.load", "torch.device", "torch.from_numpy", "torch.as_tensor", "torch.tensor"})


def _derived_on_host(flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> bool:
    """`torch.cumsum(counts, 0)`, `torch.unique_consecutive(sizes, return_counts=True)`,
    `F.l1_loss(pred, gt)`: a torch function of a host tensor, with no `device=`, computes on the host. Its first positional
    argument decides (the tensor the op works on)."""
    qual = flow.model.imports.qualify(call.func) or ""
    if qual.startswith("torch.distributions."):
        # `Categorical(probs.cpu())`: a distribution samples where its parameters are
        given = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else (
            argument(call, "probs", None) or argument(call, "logits", None) or argument(call, "loc", None))
        return given is not None and flow.ask(HOST_TENSOR, given.value, ctx, order)
    functional = qual.startswith("torch.nn.functional.") and qual.count(".") == 3  # `F.l1_loss(pred, gt)`
    if not (functional or (qual.startswith("torch.") and qual.count(".") == 1)) or qual in _PLACING:
        return False
    if argument(call, "device", None) is not None or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return False
    return flow.ask(HOST_TENSOR, call.args[0].value, ctx, order)




def host_factory(model, expr: cst.BaseExpression) -> bool:
    """`torch.rand(1)`, `torch.tensor(x).float()`: made in host memory (no `device=`), and not
    moved by the chain after it."""
    root = value_root(model, expr)
    if not type(root) is cst.Call:
        return False
    qual = model.imports.qualify(root.func) or ""
    head, _, last = qual.rpartition(".")
    if head != "torch":
        return False
    if last in TYPED_CONSTRUCTORS:
        # `torch.IntTensor([c])`: on the host unless the project makes CUDA the default type.
        if model.cuda_default_placement_in_project():
            return False
    elif last not in HOST_FACTORIES:
        return False
    if any(a.star for a in root.args) or argument(root, "device", None) is not None:
        return False
    return not _moved(model, expr)


def _last_move(model, expr: cst.BaseExpression, ctx: Optional[Context] = None, order: int = 1 << 30) -> Optional[str]:
    """Where the last move of the method chain sends the value: "host" (`loss.cpu()`,
    `x.to("cpu").sum()`, `x.to(loss_device)` after `loss_device = torch.device("cpu")`),
    "device" (`y.cuda()`, `y.to(device)`, `y_true.type_as(x)`), or None when the chain moves
    nothing (a plain name or attribute: its bindings decide). A part taken of the chain
    (`scores.cpu()[keep]`) is where the chain put it."""
    if type(expr) not in (cst.Call, cst.Subscript):
        return None
    for node in value_chain(model, expr):
        if not (type(node) is cst.Call and type(node.func) is cst.Attribute) or model.imports.qualify(node.func):
            continue
        method = node.func.attr.value
        if method == "cpu":
            return "host"
        if method == "to" and node.args:
            first = node.args[0].value
            if type(first) is cst.SimpleString and first.evaluated_value == "cpu":
                return "host"
            if not is_dtype(model, first):
                on_host = ctx is not None and names_host_device(model, first, ctx, order)
                return "host" if on_host else "device"
        elif method == "cuda" or (method == "type_as" and node.args and not host_factory(model, node.args[0].value)):
            return "device"
    return None


class HostTensor(Question[bool]):
    """A tensor in host memory on every path: a factory without `device=`, or a name only ever
    bound to one (`coin = torch.rand(1)`)."""

    key = "host-tensor"
    unknown = False
    placement = True
    skips_switched_off = True
    skips_dead = True  # `img_shape = _get_shape_onnx(image)` only while the model is traced
    self_edge = True  # `count += (labels != -100).sum()` of host values stays on the host

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[bool]:
        if type(expr) is cst.Name and expr.value == "None":
            return True  # `self.state = None` after use: no tensor on that path, on no device
        moved = _last_move(flow.model, expr, ctx, order)
        if moved is not None:
            return moved == "host"  # `loss.cpu()` handed to a logger; `y.cuda()` of a host `y`
        if id(expr) in flow.model.facts.buffer_values:
            return False  # a registered buffer goes where its module goes
        if host_factory(flow.model, expr) or type(expr) in (cst.Integer, cst.Float):
            # A Python number holds nothing on a device: `start = 0`, later `start = end` of a
            # host tensor, is host on every path.
            return True
        if _listed_on_host(flow, expr, ctx, order):
            return not _moved(flow.model, expr)
        if type(expr) is cst.BinaryOperation:
            # `out.to(loss_device).sum() - y.to(loss_device).sum()`: arithmetic of host values;
            # `i + block_size` of a host index and a Python number stays on the host too
            sides = [flow.ask(self, side, ctx, order) for side in (expr.left, expr.right)]
            if all(sides):
                return True
            # One side a tensor in host memory (not merely a Python number, which says nothing
            # of where the other side lives), the other a number or nothing said to be a tensor
            kinds = [flow.ask(TENSORS, side, ctx, order) for side in (expr.left, expr.right)]
            return any(host and kind == TENSOR for host, kind in zip(sides, kinds)) and all(
                host or kind != TENSOR for host, kind in zip(sides, kinds)
            )
        if type(expr) is cst.UnaryOperation:
            return flow.ask(self, expr.expression, ctx, order)  # `-shift[i]`
        if type(expr) is cst.Attribute and (dotted_name(expr) or "").startswith("self."):
            # `self.continuous_idx`: what the class binds to it. A plain tensor attribute made
            # by a factory stays in host memory when the module moves (only its parameters and
            # registered buffers go).
            return None
        root = value_root(flow.model, expr)
        if type(root) is cst.Call and (_joined_on_host(flow, root, ctx, order) or _derived_on_host(flow, root, ctx, order)
                                       or _tokenized(root)):
            return not _moved(flow.model, expr)
        if root is expr and type(expr) is cst.Call and flow.callee(expr, ctx, order) is not None:
            return None  # `dists = calc_dists(...)`: what the project's helper returns
        if type(root) is cst.Name and root.value == "self":
            # `int(self.grid_size[0])` of `self.grid_size = torch.Tensor([...])`: a plain tensor
            # attribute stays in host memory when its module moves (see above).
            held = next((n for n in value_chain(flow.model, expr)
                         if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == "self"), None)
            if held is None or held is expr:
                return False
            return flow.ask(self, held, ctx, order) and not _moved(flow.model, expr)
        arithmetic = next((n for n in value_chain(flow.model, expr) if type(n) is cst.BinaryOperation), None)
        if arithmetic is not None and arithmetic is not expr:
            # `(100 * torch.rand(bs)).int()`: a method of arithmetic, where both operands live
            return flow.ask(self, arithmetic, ctx, order) and not _moved(flow.model, expr)
        if not type(root) is cst.Name:
            return False
        if root is expr:
            return None
        if flow.ask(self, root, ctx, order):
            return True
        compared = next((n for n in value_chain(flow.model, expr) if type(n) is cst.Comparison), None)
        if compared is not None:
            # `(labels != -100).sum()` of a batch not yet moved: a count made in host memory
            parts = [compared.left, *(c.comparator for c in compared.comparisons)]
            if _moved(flow.model, expr):
                return False
            hosts = [self._host_operand(flow, p, ctx, order) for p in parts]
            if all(hosts):
                return True
            # `if seen[name][0] == preds[i]:` where `preds = logits.topk(k)[1].cpu()`: a tensor
            # copied to host memory compared with values not known to be tensors stays on the
            # host. A scalar made on the host (`max_id == torch.tensor(0)`) is no such anchor: a
            # zero-dimensional host tensor goes where the other operand is.
            kinds = [flow.ask(TENSORS, p, ctx, order) for p in parts]
            return any(host and kind == TENSOR and not host_factory(flow.model, p)
                       for p, host, kind in zip(parts, hosts, kinds)) and all(
                host or kind != TENSOR for host, kind in zip(hosts, kinds))
        return False

    def _host_operand(self, flow: ValueFlow, expr, ctx: Context, order: int) -> bool:
        if type(expr) is cst.UnaryOperation:
            expr = expr.expression
        if type(expr) in (cst.Integer, cst.Float):
            return True
        if type(expr) is cst.Name:
            found = literal_values(flow.model, expr, ctx, order)
            if found.complete and found.values and all(kind in ("int", "float") for kind, _ in found.values):
                return True  # `IGNORE_INDEX = -100` at the top of the module
        return flow.ask(self, expr, ctx, order) or flow.ask(RAW_BATCH, expr, ctx, order)

    def element(self, flow: ValueFlow, expr, index: int, ctx: Context, order: int) -> Optional[bool]:
        """A part of a host tensor split (`head, tail = torch.chunk(torch.arange(8), 2)`); an
        element of `None` (a state cleared after use) holds nothing."""
        if type(expr) is cst.Name and expr.value == "None":
            return True
        whole = split_tensor(flow.model, expr)
        if whole is expr:
            whole = expr.args[0].value if expr.args and expr.args[0].keyword is None and not expr.args[0].star else None
        return None if whole is None else flow.ask(self, whole, ctx, order)

    def combine(self, answers: Sequence[bool]) -> bool:
        return all(answers)

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> bool:
        """A loop target over host tensors (`for row in torch.arange(n)`, a list of them)."""
        return iterated_items(flow, assignment, self) == [True]

    def augmented(self, flow: ValueFlow, assignment: Assignment, before: bool, value: bool) -> bool:
        """`accs /= B` of a host value by a number (`B` from a shape): it stays where it is. An
        entry of a container added to it, not known to be a number, may be a tensor anywhere
        (`loss = 0`, then `loss += v["loss"]` over a model's outputs)."""
        if before and not value and assignment.value is not None:
            if (assignment.ctx.scope, assignment.target) in backpropagated(flow.model):
                # The sum is backpropagated (`train_loss = 0.`, then `train_loss += term` over
                # the entries of a loss dict, then `train_loss.backward()`): the terms are tensors
                # with a graph, on the model's device.
                return False
            kind = flow.ask(TENSORS, assignment.value, assignment.ctx, assignment.order)
            statement = assignment.statement
            if type(statement) is cst.AugAssign and type(statement.operator) in (cst.AddAssign, cst.SubtractAssign) and (
                    type(assignment.value) is cst.Subscript or _scaled_term(assignment.value)):
                # An entry of a container of outputs, or a weighted term (`total_loss +=
                # self.loss_weights[k] * loss` over a model's losses): it may be a tensor.
                return kind == PYTHON
            return kind != TENSOR
        return before and value


HOST_TENSOR = HostTensor()


def _predicate_of_argument(question, flow: ValueFlow, info, call: cst.Call, ctx: Context, order: int) -> Optional[str]:
    """A helper whose one return compares or shifts one of its parameters with constants
    (`def is_known(labels): return labels >= 0`): a tensor exactly when the argument this call
    passes for it is, whatever other calls pass. None (follow its returns) otherwise."""
    if info.class_name is not None or len(info.return_sites) != 1:
        return None
    value = info.return_sites[0].value
    if type(value) not in (cst.Comparison, cst.BinaryOperation, cst.UnaryOperation):
        return None
    names = [n for n in _operands(value) if type(n) is cst.Name]
    others = [n for n in _operands(value) if type(n) not in (cst.Name, cst.Integer, cst.Float)]
    params = [p.name.value for p in info.node.params.params]
    if others or len(names) != 1 or names[0].value not in params:
        return None
    given = argument(call, names[0].value, params.index(names[0].value))
    if given is None or given.star:
        return None
    return TENSOR if flow.ask(question, given.value, ctx, order) == TENSOR else None


def _operands(value: cst.BaseExpression) -> list:
    if type(value) is cst.Comparison:
        return [value.left, *(c.comparator for c in value.comparisons)]
    if type(value) is cst.BinaryOperation:
        return [value.left, value.right]
    if type(value) is cst.UnaryOperation:
        return [value.expression]
    return [value]


def backpropagated(model) -> Set[Tuple[str, str]]:
    """(scope, name) of the names a backward runs through, and of the names they copy
    (`loss = triplet_loss`, then `loss.backward()`: `triplet_loss` is that same tensor)."""
    return model.shared("backpropagated-names", _backpropagated)


def _backpropagated(model) -> Set[Tuple[str, str]]:
    found = set(model.facts.backward_receivers)
    for key in list(found):
        for assignment in model.facts.assignments.get(key, ()):
            value = assignment.value
            if type(value) is cst.Name and assignment.index is None and not assignment.augmented:
                found.add((key[0], value.value))
    return found


def _scaled_term(value: cst.BaseExpression) -> bool:
    """`weight * loss`, `loss / n`: a product or quotient with a name or an attribute in it, the
    shape of a weighted loss term added to a total."""
    return (type(value) is cst.BinaryOperation and type(value.operator) in (cst.Multiply, cst.Divide)
            and any(type(side) in (cst.Name, cst.Attribute, cst.Subscript, cst.Call) for side in (value.left, value.right)))


def _tokenized(call: cst.Call) -> bool:
    """`tokenizer(text, ..., return_tensors="pt")`, `processor(images=..., return_tensors="pt")`:
    a tokenizer's or processor's tensors are made in host memory."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "return_tensors":
            return type(arg.value) is cst.SimpleString and arg.value.evaluated_value == "pt"
    return False
# Functions that join a sequence of tensors into one on the device the parts are on.
_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})
# Builtins whose result is one of their arguments.
_PICKS = frozenset({"max", "min"})


def _joined_on_host(flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> bool:
    """`torch.cat(parts)` where every part is a host tensor: a literal list or tuple of them, or a
    list built in steps (`parts.append(torch.ones(n) * i)` in a loop, `containers.list_elements`)."""
    if flow.model.imports.qualify(call.func) not in _JOINS:
        return False
    parts = argument(call, "tensors", 0)
    if parts is None:
        return False
    if type(parts.value) in (cst.List, cst.Tuple):
        if any(type(e) is cst.StarredElement for e in parts.value.elements):
            return False
        found = [(e.value, ctx, order) for e in parts.value.elements]
    elif type(parts.value) is cst.Name:
        values = list_elements(flow.model, parts.value.value, ctx, order)
        if values is None:
            found = _tuple_bound(flow, parts.value.value, ctx, order)
            if found is None:
                return False
        else:
            found = [(v.expr, v.ctx, v.order) for v in values if v.flow is flow]
            if len(found) != len(values):
                return False
    else:
        return False
    return bool(found) and all(flow.ask(HOST_TENSOR, e, c, o) for e, c, o in found)


def _tuple_bound(flow: ValueFlow, name: str, ctx: Context, order: int):
    """The parts of the tuple literal a name is bound to on every path (`chunk =
    (ids[0:1], ids[i:j], ids[-1:])`, then `torch.cat(chunk)`), with where each is read."""
    reach = flow.bindings.reaching(name, ctx, order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return None
    found = []
    for assignment in reach.assignments:
        value = assignment.value
        if assignment.augmented or assignment.index is not None or type(value) is not cst.Tuple:
            return None  # a list may grow after it is bound (a helper appends to it)
        if any(type(e) is cst.StarredElement for e in value.elements):
            return None
        found.extend((e.value, assignment.ctx, assignment.order) for e in value.elements)
    return found


def _listed_on_host(flow: ValueFlow, expr, ctx: Context, order: int) -> bool:
    """`parts[i]`, or a chain on it (`parts[i] == c`), where every element the list may hold is a
    host tensor (`containers.list_elements`: a list built in steps, also through an attribute
    bound to it, `self.indices = indices`, or by a comprehension); or `table["ids"]` of a dict
    whose entry is one."""
    for node in value_chain(flow.model, expr):
        if type(node) is cst.Subscript:
            name = dotted_name(node.value)
            if name is None or len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
                return False  # a slice of a list is a list
            values = list_elements(flow.model, name, ctx, order) or _dict_item(flow, node, ctx, order)
            if not values or any(v.flow is not flow for v in values):
                return False
            return all(flow.ask(HOST_TENSOR, v.expr, v.ctx, v.order) for v in values)
    return False


# Libraries whose calls hand back NumPy arrays (or host numbers): SciPy's samplers and filters,
# OpenCV's images.
_ARRAY_LIBRARIES = frozenset({"numpy", "scipy", "cv2"})


class NumpyValue(Question[bool]):
    """The value comes from NumPy on every path (`np.asarray(x).mean()`, a name bound to one)."""

    key = "numpy"
    unknown = False

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[bool]:
        if type(expr) is cst.Call:
            qual = flow.model.imports.qualify(expr.func)
            if qual is not None:
                return qual.split(".")[0] in _ARRAY_LIBRARIES
            if type(expr.func) is cst.Attribute:
                if expr.func.attr.value == "astype":
                    return True  # a NumPy method: tensors have none of that name
                return flow.ask(self, expr.func.value, ctx, order)
            if flow.callee(expr, ctx, order) is not None:
                return None  # what a project helper returns (`truncated_normal(size)` of SciPy's sampler)
            return False
        if type(expr) in (cst.Attribute, cst.Subscript):
            return flow.ask(self, expr.value, ctx, order)
        if type(expr) is cst.BinaryOperation:
            # `(np.repeat(a, m) + np.tile(b, n)) % n`: arithmetic of an array with arrays or numbers
            sides = (expr.left, expr.right)
            numpy = [flow.ask(self, side, ctx, order) for side in sides]
            return any(numpy) and all(
                found or flow.ask(TENSORS, side, ctx, order) != TENSOR for found, side in zip(numpy, sides))
        return None

    def element(self, flow: ValueFlow, expr, index: int, ctx: Context, order: int) -> Optional[bool]:
        # A row of a NumPy array is an array or a NumPy scalar (`theta, z = to_spherical(xyz)`
        # of a helper returning `np.array([theta, z])`): still host data.
        return True if flow.ask(self, expr, ctx, order) else None

    def combine(self, answers: Sequence[bool]) -> bool:
        return all(answers)


NUMPY = NumpyValue()


class RawBatch(Question[bool]):
    """A loader's loop variable, or a part of one (`x[valid]`, `batch["x"]`, `x, y = batch`,
    `x.to(torch.float16)`), that no device move has touched yet: it is still in host memory.
    One such path is enough (precision first: say nothing when it may be on the host)."""

    key = "raw-batch"
    unknown = False
    placement = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[bool]:
        node = expr
        while type(node) in (cst.Attribute, cst.Subscript, cst.Call, cst.Comparison, cst.BinaryOperation,
                             cst.UnaryOperation):
            if type(node) is cst.Call:
                qual = flow.model.imports.qualify(node.func) or ""
                if qual in _JOINS:
                    # `torch.stack([x[0] for x in batch[1]])`: joined where the parts are
                    return self._joined_raw(flow, node, ctx, order)
                if (qual.startswith("torch.") and qual.count(".") == 1 and qual not in _PLACING and node.args
                        and node.args[0].keyword is None and not node.args[0].star
                        and not any(a.keyword is not None and a.keyword.value == "device" for a in node.args)):
                    # `torch.where(labels[i] == end)[0]` of a batch still on the host
                    return bool(flow.ask(self, node.args[0].value, ctx, order))
                if type(node.func) is cst.Name and node.func.value in _PICKS and not qual:
                    return self._picked_raw(flow, node, ctx, order)
                if not type(node.func) is cst.Attribute or moves_to_device(flow.model, node, ctx, order):
                    return False
                node = node.func.value
            elif type(node) in (cst.Comparison, cst.BinaryOperation):
                node = node.left  # `(y == 1).sum()`: computed from its left operand
            elif type(node) is cst.UnaryOperation:
                node = node.expression  # `(~mask).sum()`
            else:
                node = node.value
        if not type(node) is cst.Name:
            return False
        if moved_in_place(flow.model, node.value, ctx, order):
            return False  # `to_gpu(data)`: a project helper stored device copies into its items
        if node is expr:
            return self._listed_raw(flow, node, ctx, order)
        return flow.ask(self, node, ctx, order)

    def _picked_raw(self, flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> bool:
        """`max(t1[1], t2[1])` of batch parts still on the host picks one of them."""
        if flow.bindings.function(call.func.value, ctx, order) is not None:
            return False  # the file's own `max`
        return any(a.keyword is None and not a.star and flow.ask(self, a.value, ctx, order) for a in call.args)

    def _listed_raw(self, flow: ValueFlow, name: cst.Name, ctx: Context, order: int) -> Optional[bool]:
        """A list built in steps from batch parts (`infos = []`, then `infos.append(part)` in a
        helper that takes a batch apart): its elements are still on the host."""
        reach = flow.bindings.reaching(name.value, ctx, order)
        if not reach.assignments or reach.parameter is not None:
            return None
        if not all(builds_list(a) for a in reach.assignments):
            return None
        values = list_elements(flow.model, name.value, ctx, order)
        return bool(values) and any(v.flow.ask(self, v.expr, v.ctx, v.order) for v in values)

    def _joined_raw(self, flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> bool:
        """The parts a join is given are raw batch parts: a comprehension over one, or a list of them."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return False
        parts = call.args[0].value
        if type(parts) in (cst.ListComp, cst.GeneratorExp):
            return bool(flow.ask(self, parts.for_in.iter, ctx, order))
        if type(parts) in (cst.List, cst.Tuple) and parts.elements:
            return all(type(e) is cst.Element and flow.ask(self, e.value, ctx, order) for e in parts.elements)
        # `torch.cat(x.transf)`: a field of a batch that holds a list of tensors
        return type(parts) in (cst.Name, cst.Attribute) and bool(flow.ask(self, parts, ctx, order))

    def combine(self, answers: Sequence[bool]) -> bool:
        return any(answers)

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> bool:
        hint = loop_target_hint(flow.model, assignment)
        if hint in ("batch", "loader-batch"):
            # A loop over loaders a framework prepared (`accelerator.prepare(loader)`) gets
            # its batches on the device, whatever the names say.
            return not _prepared_loop(flow.model, assignment)
        if hint == "index":
            return True
        ctx, order = assignment.ctx, assignment.order
        source = iterated_source(flow.model, assignment)
        if source is not None and type(source) is cst.Subscript and flow.ask(self, source, ctx, order):
            return True  # `zip(transf[0], transf[1])`: the rows of a part of a batch
        zipped = _zipped_parts(flow.model, assignment)
        if zipped and all(type(p) is cst.Subscript and flow.ask(self, p, ctx, order) for p in zipped):
            return True  # `for i, (t1, t2) in enumerate(zip(transf[0], transf[1]))`
        return True in iterated_items(flow, assignment, self)  # `for x in batch_x`, still on the host

    def drawn(self, flow: ValueFlow, call: cst.Call, ctx: Context, order: int, index: Optional[int]) -> Optional[bool]:
        return True if loaders_drawn(flow.model, call, RAW_LOADERS)[0] else None


RAW_BATCH = RawBatch()


def _prepared_loop(model, assignment: Assignment) -> bool:
    """The loop goes over loaders that a framework prepared (`accelerator.prepare(loader)`, or
    its `skip_first_batches` of one), and none reaches it as it was built."""
    iterable = assignment.iterable
    if iterable is None:
        return False
    order = model.order_of(iterable)
    sites, _ = model.values.ask(LOADERS, iterable, assignment.ctx, order)
    if not sites or model.values.ask(RAW_LOADERS, iterable, assignment.ctx, order)[0]:
        return False
    return all(placed_by_framework(owner_of(model, site) or model, site) for site in sites)


def _at(model, expr: cst.BaseExpression, order: Optional[float]) -> float:
    return model.order_of(expr) if order is None else order


def is_host_tensor(model, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> bool:
    return model.values.ask(HOST_TENSOR, expr, ctx, _at(model, expr, order))


def is_numpy(model, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> bool:
    return model.values.ask(NUMPY, expr, ctx, _at(model, expr, order))


def is_raw_batch(model, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> bool:
    return model.values.ask(RAW_BATCH, expr, ctx, _at(model, expr, order))


# Factories that build a tensor in host memory unless given `device=`.
# Data that can only be in host memory: displays, comprehensions and number literals.
_HOST_DATA = (cst.List, cst.Tuple, cst.ListComp, cst.Integer, cst.Float, cst.UnaryOperation)
HOST_BUILDERS = frozenset(
    "zeros ones empty full arange linspace logspace eye tensor as_tensor rand randn randint randperm "
    # The legacy typed constructors, on the host unless the script changes the default type.
    "Tensor FloatTensor DoubleTensor HalfTensor LongTensor IntTensor ShortTensor CharTensor ByteTensor BoolTensor".split()
)
_MOVES = frozenset({"cuda", "to", "type", "pin_memory"})
# In-place writes of data taken from another tensor (`torch.zeros(n, k).scatter_(1, labels, 1)`,
# a one-hot made from host labels): the buffer holds that data, which crosses to the device
# whichever way the tensor is made, as a staging buffer's does.
_DATA_WRITES = frozenset({
    "scatter_", "scatter", "scatter_add_", "index_put_", "index_copy_", "index_add_", "masked_scatter_", "copy_", "put_",
})




def _number(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = _number(expr.expression)
        return None if inner is None else "-" + inner
    return expr.value if type(expr) in (cst.Integer, cst.Float) else None


# Methods that hand back an array's values in another form (`labels[idx].astype(int)`): what a
# typed constructor given their result converts is data, never a size.
_ARRAY_CONVERSIONS = frozenset({"astype", "tolist", "numpy", "ravel", "flatten", "reshape", "transpose", "copy"})


def given_python_data(model, factory: cst.Call, kind: str) -> bool:
    """`torch.tensor(labels)`, `torch.as_tensor(sizes)`, `torch.Tensor([w, h, w, h])`: a factory
    that copies values the program holds, which cross the host link whichever way the tensor
    is made (`device=` saves nothing). Not a number, numbers all equal (`[0]`, `[label] * n`) or `range(n)`,
    which a factory could make on the device itself (`torch.full`, `torch.zeros`,
    `torch.arange`), nor the sizes a typed constructor is given (`torch.FloatTensor(n, h)`, a
    lone name or call, which may be a size)."""
    if kind not in ("tensor", "as_tensor") and kind not in TYPED_CONSTRUCTORS:
        return False
    positional = [a for a in factory.args if a.keyword is None and not a.star]
    if not positional:
        return False
    data = positional[0].value
    if kind in TYPED_CONSTRUCTORS:
        if len(positional) > 1 or type(data) not in (cst.List, cst.Tuple, cst.ListComp, cst.Call):
            return False
        if type(data) is cst.Call and not (model.imports.qualify(data.func) or "").startswith("numpy.") and not (
                type(data.func) is cst.Attribute and data.func.attr.value in _ARRAY_CONVERSIONS):
            return False  # `torch.LongTensor(len(ids))`: a size; `range(n)`: an arange
    if type(data) is cst.Name and kind not in TYPED_CONSTRUCTORS:
        # `ii = [0] * (num - 1)`, then `torch.as_tensor(ii)`: judged by what the name holds.
        site = model.site_of(factory)
        found = model.reaching(data.value, site.ctx, site.order) if site is not None else []
        held = [a.value for a in found if a.order < site.order]
        if held and all(a.value is not None and a.index is None and not a.augmented for a in found) and all(
                _device_makeable(value) for value in held) and not _grown(
                    model, data.value, site, min(a.order for a in found if a.order < site.order)):
            return False
        return True
    return not _device_makeable(data)


def _grown(model, name: str, site, since: int) -> bool:
    """The list ``name`` may be changed in the function of ``site`` before the conversion: item by
    item (`ids.append(x)`, `ids[i] = x`), or, after its first binding ``since``, by a call it is
    handed to or whose receiver it is (`random.shuffle(ids)`, `ids.sort()`, `fill(ids, x)`): its
    values are then the program's."""
    function = site.ctx.function
    if any(store.ctx.function is function for store in model.facts.item_stores.get(name, ())):
        return True
    orders = model.shared("tensors.names-handed-to-calls", _names_handed_to_calls).get((id(function), name), ())
    at = bisect.bisect_right(orders, since)
    return at < len(orders) and orders[at] < site.order


def _names_handed_to_calls(model) -> dict:
    """(function id, name) -> the sorted orders of the calls that take the name as an argument or
    receiver: built once per file, so that each conversion asks in log time, not over every call."""
    found: dict = {}
    for call in model.facts.calls:
        names = {a.value.value for a in call.node.args if type(a.value) is cst.Name}
        if call.receiver_name is not None:
            names.add(call.receiver_name)
        for name in names:
            found.setdefault((id(call.ctx.function), name), []).append(call.order)
    for orders in found.values():
        orders.sort()
    return found


def _device_makeable(data: cst.BaseExpression) -> bool:
    """A number, numbers all equal (`[0]`, `[label] * n`) or `range(n)` (also in `list(...)`):
    values a factory could make on the device itself."""
    if _number(data) is not None:
        return True
    if type(data) in (cst.List, cst.Tuple):
        elements = data.elements
        numbers = {_number(e.value) for e in elements if type(e) is cst.Element}
        return len(numbers) == 1 and None not in numbers and all(type(e) is cst.Element for e in elements)
    if type(data) is cst.Call and dotted_name(data.func) == "list" and len(data.args) == 1:
        data = data.args[0].value
    if type(data) is cst.Call and dotted_name(data.func) == "range":
        return True
    return _repeated_scalar(data)


def _repeated_scalar(data: cst.BaseExpression) -> bool:
    """`[label] * n`, `n * [0.5]`: one number repeated, which `torch.full` makes on the device."""
    if type(data) is not cst.BinaryOperation or type(data.operator) is not cst.Multiply:
        return False
    for listed in (data.left, data.right):
        if type(listed) is cst.List and len(listed.elements) == 1 and type(listed.elements[0]) is cst.Element:
            item = listed.elements[0].value
            return _number(item) is not None or type(item) in (cst.Name, cst.Attribute)
    return False


def _converts_named_data(model, factory: cst.Call, kind: str, ctx: Context, order: int) -> bool:
    """`torch.FloatTensor(train_feats)`: a typed constructor given one name that is not known to
    hold a whole number (a size): the conversion of an array the program holds."""
    if kind not in TYPED_CONSTRUCTORS or len(factory.args) != 1:
        return False
    arg = factory.args[0]
    if arg.keyword is not None or arg.star:
        return False
    if type(arg.value) in (cst.Attribute, cst.Subscript):
        # `torch.LongTensor(all_labels[idx])`, `torch.Tensor(self.feats)`: an array's values,
        # unless it reads a size (`x.shape[0]`).
        return not _size_like(arg.value)
    if type(arg.value) is not cst.Name:
        return False
    found = literal_values(model, arg.value, ctx, order)
    if found.values and all(kind_ == "int" for kind_, _ in found.values):
        return False
    # `n = feats.size(0)`, `n = len(ids)`, `n = h * w`: a size, whatever its value.
    return not any(_size_like(a.value) for a in model.reaching(arg.value.value, ctx, order) if a.value is not None)


def _size_like(value: cst.BaseExpression) -> bool:
    if type(value) in (cst.Integer, cst.BinaryOperation):
        return True
    if type(value) is cst.Subscript:
        return type(value.value) is cst.Attribute and value.value.attr.value == "shape"
    if type(value) is cst.Call:
        func = value.func
        if type(func) is cst.Name:
            return func.value in ("len", "int", "max", "min")
        return type(func) is cst.Attribute and func.attr.value in ("size", "numel", "item", "dim")
    return False


# Sparse tensors made of an index tensor and a value tensor (then a size).
_SPARSE_BUILDERS = frozenset({
    "torch.sparse.FloatTensor", "torch.sparse.LongTensor", "torch.sparse.DoubleTensor",
    "torch.sparse_coo_tensor", "torch.sparse_csr_tensor",
})


class HostBuilt(Question[str]):
    """The torch factory (`arange`, `ones`, ...) a value is built from in host memory: the
    factory itself, torch functions, methods and arithmetic on it (`torch.exp(c *
    torch.arange(n) / n)`), names bound to such values. "" when some path is not, or is moved."""

    key = "host-built"
    unknown = ""

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[str]:
        if type(expr) is cst.Call:
            model = flow.model
            func = expr.func
            qual = model.imports.qualify(func) or ""
            head, _, last = qual.rpartition(".")
            if head == "torch" and last in HOST_BUILDERS:
                if given_python_data(model, expr, last) or _converts_named_data(model, expr, last, ctx, order):
                    return ""  # the values cross the host link whichever way the tensor is made
                placed = any(a.keyword is not None and a.keyword.value in ("device", "out") for a in expr.args)
                if last == "as_tensor" and expr.args and not isinstance(expr.args[0].value, _HOST_DATA):
                    return ""  # `torch.as_tensor(sigma)` hands back a tensor argument as it is, wherever it lives
                return "" if placed or any(a.star for a in expr.args) else last
            if qual.startswith("torch."):
                for arg in expr.args:
                    if arg.keyword is not None and arg.keyword.value == "device":
                        return ""
                found = [flow.ask(self, a.value, ctx, order) for a in expr.args if a.keyword is None and not a.star]
                if qual in _SPARSE_BUILDERS:
                    # `torch.sparse.FloatTensor(idx, torch.ones(n), size)`: indices from the host's
                    # graph data cross the link whichever way the values are made.
                    return found[1] if len(found) >= 2 and found[0] and found[1] else ""
                return next((f for f in found if f), "")
            if type(func) is cst.Attribute and not qual:
                if func.attr.value in _MOVES or func.attr.value in _DATA_WRITES:
                    return ""
                return flow.ask(self, func.value, ctx, order)
            return ""
        if type(expr) is cst.BinaryOperation:
            if _numpy_data(flow.model, expr.left, ctx, order) or _numpy_data(flow.model, expr.right, ctx, order):
                return ""  # `(pos + shift) * np.exp(scale)`: values drawn on the host cross anyway
            return flow.ask(self, expr.left, ctx, order) or flow.ask(self, expr.right, ctx, order)
        if type(expr) is cst.UnaryOperation:
            return flow.ask(self, expr.expression, ctx, order)
        if type(expr) is cst.Subscript:
            return flow.ask(self, expr.value, ctx, order)
        if type(expr) is cst.Comparison:
            # `(labels.unsqueeze(0) == labels.unsqueeze(1)).float()`: compared on the host.
            operands = (expr.left, *(c.comparator for c in expr.comparisons))
            return next((f for f in (flow.ask(self, o, ctx, order) for o in operands) if f), "")
        if type(expr) in (cst.List, cst.Tuple) and expr.elements:
            # The parts `torch.cat([...])` joins: every one built on the host.
            if any(type(e) is cst.StarredElement for e in expr.elements):
                return ""
            return self.combine([flow.ask(self, e.value, ctx, order) for e in expr.elements])
        if type(expr) is cst.ListComp:
            return flow.ask(self, expr.elt, ctx, order)  # `[torch.arange(n) for _ in range(k)]`
        if type(expr) is cst.Name and _filled_in_place(flow.model, expr.value, ctx, order):
            return ""  # a staging buffer the host filled with data, also one a helper returns
        if type(expr) is cst.Name and expr.value == "None":
            # `extra_zeros = None`, later `extra_zeros = torch.zeros(...)`: a move of the name
            # raises on None, so a run that copies it copies what the other bindings built.
            return _NO_TENSOR
        if type(expr) in (cst.Name, cst.IfExp):
            return None
        return ""

    def combine(self, answers: Sequence[str]) -> str:
        built = [a for a in answers if a != _NO_TENSOR]
        if not built:
            return _NO_TENSOR if answers else ""
        return built[0] if all(built) else ""

    def augmented(self, flow: ValueFlow, assignment: Assignment, before: str, value: str) -> str:
        return before if before and (value or assignment.value is not None) else ""


HOST_BUILT = HostBuilt()
_NO_TENSOR = "none"  # HostBuilt's answer for `None`: no path that moves the value holds it


def _numpy_data(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """A numpy call (`np.random.uniform(...)`), or a name every binding of which is one."""
    if type(expr) is cst.Call:
        return (model.imports.qualify(expr.func) or "").startswith("numpy.")
    if type(expr) is cst.Name:
        found = model.reaching(expr.value, ctx, order)
        return bool(found) and all(
            a.value is not None and a.index is None and type(a.value) is cst.Call
            and (model.imports.qualify(a.value.func) or "").startswith("numpy.")
            for a in found
        )
    return False


def _filled_in_place(model, name: str, ctx: Context, order: float) -> bool:
    """Some `name[...] = ...` of the same scope runs before this read: the tensor holds data the
    host wrote into it (a target buffer built item by item), not just what its factory made."""
    record = model.facts.subscript_stores.get((ctx.scope, name))
    return record is not None and record[0] < order and not record[2]


def names_cuda(model, device: cst.BaseExpression, ctx: Context, order: int) -> bool:
    """A device expression that points at CUDA: as `device_kind` says, but not the device of a
    tensor that lives on the host (`.to(var.device)` where `var = torch.bernoulli(torch.tensor(p))`
    copies nothing)."""
    if device_kind(model, device, ctx, order) != "cuda":
        return False
    if type(device) is cst.Attribute and device.attr.value == "device":
        return not is_host_tensor(model, device.value, ctx, order)
    return True


def host_built_from(model, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> str:
    """The factory a value is built from in host memory ("" when not known to be)."""
    found = model.values.ask(HOST_BUILT, expr, ctx, _at(model, expr, order))
    return "" if found == _NO_TENSOR else found


def _type_is_tensor(model, test: cst.BaseExpression, name: str) -> bool:
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    if type(test.comparisons[0].operator) not in (cst.Equal, cst.Is):
        return False
    left, right = test.left, test.comparisons[0].comparator
    return (type(left) is cst.Call and dotted_name(left.func) == "type" and len(left.args) == 1
            and dotted_name(left.args[0].value) == name and model.imports.qualify(right) == "torch.Tensor")


def type_fallback(model, expr: cst.BaseExpression, ctx: Context) -> bool:
    """The read runs under `if isinstance(name, torch.Tensor):` (or `if hasattr(name, "item"):`,
    `if type(name) == torch.Tensor:`):
    code that takes tensors and numbers alike and converts only the tensors (a metric logger's
    `update(**values)`), whose callers decide what it gets."""
    name = dotted_name(expr)
    if name is None:
        return False
    for condition in conditions(ctx):
        test = condition.guard.test
        if condition.holds and _type_is_tensor(model, test, name):
            return True  # `if type(value) == torch.Tensor:`, `if type(value) is torch.Tensor:`
        if not condition.holds or not type(test) is cst.Call or len(test.args) != 2:
            continue
        tested, kind = test.args[0].value, test.args[1].value
        if dotted_name(tested) != name:
            continue
        if dotted_name(test.func) == "isinstance" and model.imports.qualify(kind) == "torch.Tensor":
            return True
        if dotted_name(test.func) == "hasattr" and type(kind) is cst.SimpleString and kind.evaluated_value == "item":
            return True
    return False
