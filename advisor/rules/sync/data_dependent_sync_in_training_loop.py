"""GPU104 `data-dependent-sync-in-training-loop`: tensor truthiness or data-dependent output sizes on every training step."""

from __future__ import annotations
from typing import Iterator, List, Optional, Tuple
import libcst as cst
from advisor.model import CallSite, Context, FileModel, Heat
from advisor.model.builder import is_periodic_test
from advisor.model.file_model import TENSOR_METHODS, call_argument
from advisor.model.subtree import contains
from advisor.model.walk import children
from advisor.rules.base import Report, Rule, snippet
from advisor.rules.sync.tensor_values import TRAINING_TEXT, device_kind, is_dtype, numpy_value, raw_batch_value


# Factories that, without `device=`, build a tensor in host memory: tests on them never wait for the GPU.
_HOST_FACTORIES = frozenset(
    "tensor as_tensor from_numpy zeros ones empty full rand randn randint randperm arange linspace".split()
)


# Calls whose output size depends on the data: the host must read a count back from the GPU.
_SIZE_SYNC_FUNCTIONS = frozenset(
    {"torch.nonzero", "torch.argwhere", "torch.masked_select", "torch.unique", "torch.unique_consecutive"}
)


_SIZE_SYNC_METHODS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"})


_MASK_FUNCTIONS = frozenset(
    "isnan isinf isfinite isneginf isposinf logical_not logical_and logical_or logical_xor eq ne gt lt ge le "
    "greater less greater_equal less_equal not_equal isin".split()
)


_MASK_METHODS = _MASK_FUNCTIONS | {"bool"}


_VALUE_COMPARISONS = (
    cst.Equal,
    cst.NotEqual,
    cst.LessThan,
    cst.GreaterThan,
    cst.LessThanEqual,
    cst.GreaterThanEqual,
)


_RAW_HINTS = ("batch", "loader-batch", "index")


# Tensor methods that return tensors: those the model knows, and predicates and casts.
_MORE_TENSOR_METHODS = TENSOR_METHODS | frozenset(
    "any all isnan isinf isfinite logical_not logical_and logical_or eq ne gt lt ge le bool int".split()
)


def _value_root(model: FileModel, expr: cst.BaseExpression) -> cst.BaseExpression:
    """Like `chain_root`, but stops at a call of an imported function (`torch.rand(1)`)."""
    while True:
        if isinstance(expr, cst.Call):
            if model.imports.qualify(expr.func) is not None or not isinstance(expr.func, cst.Attribute):
                return expr
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, (cst.Comparison, cst.BinaryOperation)):
            expr = expr.left
        elif isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        else:
            return expr


def _is_tensor(model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> bool:
    """`model.is_tensor`, plus reductions and predicates on tensors (`(x != 0).any()`) and names
    bound only to a batch field moved to the device (`labels = batch["labels"].cuda()`)."""
    if depth > 6:
        return False
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and model.imports.qualify(expr.func) is None:
        if expr.func.attr.value in _MORE_TENSOR_METHODS:
            return _is_tensor(model, expr.func.value, ctx, depth + 1)
    if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
        return _is_tensor(model, expr.expression, ctx, depth + 1)
    if isinstance(expr, cst.Comparison):
        return _is_tensor(model, expr.left, ctx, depth + 1) or any(
            _is_tensor(model, c.comparator, ctx, depth + 1) for c in expr.comparisons
        )
    if isinstance(expr, cst.BinaryOperation):
        return _is_tensor(model, expr.left, ctx, depth + 1) or _is_tensor(model, expr.right, ctx, depth + 1)
    if isinstance(expr, cst.Subscript):
        return _is_tensor(model, expr.value, ctx, depth + 1)
    if model.is_tensor(expr, ctx):
        return True
    if isinstance(expr, cst.Name):
        found = model.assignments(expr.value, ctx)
        return bool(found) and all(_moved_batch_field(model, a.value, a.ctx) and a.index is None for a in found)
    return False


def _moved_batch_field(model: FileModel, value: Optional[cst.BaseExpression], ctx) -> bool:
    """`batch["labels"].cuda()`, `batch[1].to(device, non_blocking=True)`: a tensor on the device."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Subscript)
        and _moves_to_device(model, value, ctx)
        and device_kind(model, _move_target(value), ctx) == "cuda"
    )


def _move_target(call: cst.Call) -> cst.BaseExpression:
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda":
        return cst.SimpleString('"cuda"')
    target = call_argument(call, "device", 0)
    return target.value if target is not None else cst.Name("None")


def _data_root(model: FileModel, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The value an expression computes from: `y` in `torch.isnan(y).any()` or `(y == 0).all()`."""
    for _ in range(8):
        root = _value_root(model, expr)
        if not (isinstance(root, cst.Call) and root.args and not root.args[0].star):
            return root
        if not (model.imports.qualify(root.func) or "").startswith("torch."):
            return root
        expr = root.args[0].value
    return expr


def _still_on_host(model: FileModel, name: str, ctx, order: float, node: cst.CSTNode, depth: int = 0) -> bool:
    """``name`` holds, at ``order``, a loader's loop variable or a part of one (`x[valid]`,
    `batch["x"]`, `x, y = batch`, `x.to(torch.float16)`) that no device move has touched yet."""
    reaching = _reaching(model, name, ctx, order, node)
    return reaching is not None and _binding_on_host(model, reaching, depth)


def _binding_on_host(model: FileModel, assignment, depth: int = 0) -> bool:
    value = assignment.value
    if value is None:
        return assignment.kind_hint in _RAW_HINTS
    if depth > 4:
        return False
    if assignment.index is not None:
        if not isinstance(value, (cst.Tuple, cst.List)):
            value = value if isinstance(value, cst.Name) else None
        elif assignment.index < len(value.elements):
            value = value.elements[assignment.index].value
        else:
            value = None
    node = value
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        if isinstance(node, cst.Call):
            if not isinstance(node.func, cst.Attribute) or _moves_to_device(model, node, assignment.ctx):
                return False
            node = node.func.value
        else:
            node = node.value
    if not isinstance(node, cst.Name):
        return False
    where = assignment.statement or value
    return _still_on_host(model, node.value, assignment.ctx, assignment.order, where, depth + 1)


def _moves_to_device(model: FileModel, call: cst.Call, ctx) -> bool:
    """`.cuda(...)`, or `.to(...)` unless it only changes the dtype or goes to the CPU."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    if method == "cuda":
        return True
    if method != "to":
        return False
    target = call_argument(call, "device", 0)
    if target is None or is_dtype(model, target.value):
        return False
    return device_kind(model, target.value, ctx) != "host"


def _host_factory(model: FileModel, expr: cst.BaseExpression) -> bool:
    """`torch.rand(1)`, `torch.tensor(x)`: made in host memory (no `device=`)."""
    root = _value_root(model, expr)
    if not isinstance(root, cst.Call):
        return False
    qual = model.imports.qualify(root.func) or ""
    head, _, last = qual.rpartition(".")
    if head != "torch" or last not in _HOST_FACTORIES:
        return False
    if any(a.star for a in root.args) or call_argument(root, "device", None) is not None:
        return False
    # `torch.zeros(3).cuda()`: the chain moves it afterwards.
    node = expr
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)) and node is not root:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in ("cuda", "to"):
                return False
        node = node.func if isinstance(node, cst.Call) else node.value
    return True


def _host_value(model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> bool:
    """The expression is a tensor in host memory: a factory without `device=`, or a name only
    ever bound to one (`coin = torch.rand(1)`)."""
    if _host_factory(model, expr):
        return True
    root = _value_root(model, expr)
    if not isinstance(root, cst.Name) or depth > 2:
        return False
    found = [a for a in model.assignments(root.value, ctx)]
    return bool(found) and all(
        a.value is not None and a.index is None and _host_value(model, a.value, a.ctx, depth + 1) for a in found
    )


def _reaching(model: FileModel, name: str, ctx, order: float, node: cst.CSTNode):
    """The assignment of ``name`` that reaches ``node`` (at ``order``), ignoring the statement
    that contains ``node`` itself (`x = x[mask]` reads the previous `x`)."""
    found = model.assignments(name, ctx)
    if not found:
        return None
    if found[0].ctx.scope != ctx.scope:
        return found[-1]
    earlier = [a for a in found if a.order < order]
    while earlier and earlier[-1].statement is not None and contains(earlier[-1].statement, node):
        earlier.pop()
    return earlier[-1] if earlier else None


class _OrderIndex:
    """Source order for nodes the walk did not number (tests, subscripts): the order of the last
    recorded call before them, found by walking the enclosing loop or function body only."""

    def __init__(self, model: FileModel) -> None:
        self.model = model
        self._calls = None

    def _call_orders(self):
        if self._calls is None:
            self._calls = {id(site.node): site.order for site in self.model.facts.calls}
        return self._calls

    def order_of(self, node: cst.CSTNode, ctx) -> Optional[float]:
        calls = self._call_orders()
        inner = [calls[id(c)] for c in _calls_in(node) if id(c) in calls]
        if inner:
            return min(inner) - 0.5
        scope = None
        loop = ctx.loop
        while loop is not None:
            scope, loop = loop.node, loop.parent
        if scope is None and ctx.function is not None:
            scope = ctx.function.node
        if scope is None:
            return None
        last = None
        stack = [scope]
        while stack:
            current = stack.pop()
            if current is node:
                return None if last is None else last + 0.5
            if isinstance(current, cst.Call) and id(current) in calls:
                last = calls[id(current)]
            stack.extend(reversed(children(current)))
        return None


def _calls_in(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            yield current
        if not isinstance(current, cst.Lambda):
            stack.extend(children(current))


def _one_positional(call: cst.Call) -> bool:
    return len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star


def _truth_operands(test: cst.BaseExpression) -> Iterator[Tuple[cst.BaseExpression, bool]]:
    """The parts of a test that Python turns into `bool`: `a and not b` gives `a` and `b`, each
    with whether a periodic test before it short-circuits it (`step % 100 == 0 and loss > 9`).
    Identity and membership tests (`x is None`, `k in d`) never read a tensor's value."""
    stack = [(test, False)]
    while stack:
        node, gated = stack.pop()
        if isinstance(node, cst.BooleanOperation):
            short = isinstance(node.operator, cst.And) and is_periodic_test(node.left)
            stack.extend(((node.right, gated or short), (node.left, gated)))
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            stack.append((node.expression, gated))
        elif isinstance(node, cst.Comparison) and any(
            isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in node.comparisons
        ):
            continue
        else:
            yield node, gated


class _StoreTargets:
    """Subscripts that are assigned to (`out[mask] = 0`), found by walking one loop or function
    body the first time a candidate there is seen."""

    def __init__(self) -> None:
        self._walked: dict = {}

    def is_store(self, subscript: cst.Subscript, ctx) -> bool:
        scope = None
        loop = ctx.loop
        while loop is not None:
            scope, loop = loop.node, loop.parent
        if scope is None:
            scope = ctx.function.node if ctx.function is not None else None
        if scope is None:
            return False
        targets = self._walked.get(id(scope))
        if targets is None:
            targets = set()
            stack = [scope]
            while stack:
                current = stack.pop()
                if isinstance(current, cst.Assign):
                    for target in current.targets:
                        targets.update(_subscript_ids(target.target))
                elif isinstance(current, (cst.AugAssign, cst.AnnAssign)):
                    targets.update(_subscript_ids(current.target))
                elif isinstance(current, cst.Del):
                    targets.update(_subscript_ids(current.target))
                stack.extend(children(current))
            self._walked[id(scope)] = targets
        return id(subscript) in targets


def _subscript_ids(target: cst.BaseExpression) -> set:
    if isinstance(target, cst.Subscript):
        return {id(target)}
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set = set()
        for element in target.elements:
            out |= _subscript_ids(element.value)
        return out
    if isinstance(target, cst.StarredElement):
        return _subscript_ids(target.value)
    return set()


def _subscripts_in_hot_code(model: FileModel) -> Iterator[Tuple[cst.Subscript, Context]]:
    """The subscripts the walk recorded (those inside loops), then those of functions that run
    on every step but hold no loop themselves (`train_step(batch)`): the model records no
    subscripts there, so each such function's own body is walked once, following periodic
    `if` tests so that gated code keeps its lower severity."""
    seen = set()
    for subscript, ctx in model.facts.subscripts:
        seen.add(id(subscript))
        yield subscript, ctx
    for key, info in model.facts.functions.items():
        if model.function_heat(key) is None:
            continue
        base = Context(function=info, class_name=info.class_name)
        stack: List[Tuple[cst.CSTNode, Context]] = [(info.node.body, base)]
        while stack:
            node, ctx = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Subscript) and id(node) not in seen:
                yield node, ctx
            if isinstance(node, cst.If) and is_periodic_test(node.test):
                stack.append((node.test, ctx))
                stack.append((node.body, ctx.derive(gated=True)))
                if node.orelse is not None:
                    stack.append((node.orelse, ctx))
                continue
            stack.extend((child, ctx) for child in children(node))


class DataDependentSyncInTrainingLoop(Rule):
    code = "GPU104"
    name = "data-dependent-sync-in-training-loop"
    summary = "tensor truthiness or data-dependent output sizes on every training step"
    what = """
        Inside the innermost training loop: an `if`, `while` or `assert` that tests a tensor
        (`if (x != 0).all():`, `if loss > 10:`, `while not torch.isfinite(loss):`), and the
        operations whose output size depends on the values: `nonzero()`, `argwhere`,
        one-argument `torch.where(cond)`, `masked_select`, `unique()`, and indexing with a
        boolean mask (`logits[labels != -100]`, or a name bound to such a comparison). Tests
        on Python values, integer or slice indexes, and batches still in host memory (before
        they are moved) are left alone. Under a periodic or rank-0 condition it is only
        informational.
    """
    why = """
        Python needs a real `True` or `False` to choose a branch, and the allocator needs to
        know how many elements a result has before it can be created: both are answered by
        copying a value from the GPU, which waits for every kernel queued before it. Nothing in
        `if mask.any():` or `x[mask]` looks like a copy, yet each one stops the host from
        running ahead of the GPU, every step.
    """
    example = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            logits = model(x)
            keep = y != -100
            loss = F.cross_entropy(logits[keep], y[keep])
            if torch.isnan(loss):
                continue
            loss.backward()
            optimizer.step()
    """
    instead = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            logits = model(x)
            loss = F.cross_entropy(logits, y, ignore_index=-100)  # fixed shapes, no host read
            loss.backward()
            optimizer.step()
        # check for NaN every N steps, or let GradScaler skip bad steps on the device
    """
    hint = (
        "keep shapes fixed (`torch.where(c, a, b)`, `masked_fill`, `ignore_index`) and test tensors "
        "every N steps, not every step"
    )
    requires = (("if", "while", "assert", "nonzero", "where", "masked_select", "unique", "["), TRAINING_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        orders = _OrderIndex(model)
        for condition in model.facts.conditions:
            ctx = condition.ctx
            if condition.kind == "while" and condition.loop is not None:
                ctx = ctx.derive(loop=condition.loop)  # the test runs on every iteration of its loop
            heat = model.sync_heat(ctx)
            if heat is None:
                continue
            for operand, short_circuited in _truth_operands(condition.test):
                if self._device_tensor(model, operand, ctx, orders):
                    yield self.report(
                        operand,
                        "`{statement}` on tensor `{expression}` copies it to the host "
                        "and waits for the GPU on every training step",
                        severity=self.severity_for(Heat.GATED if short_circuited else heat),
                        data={"statement": condition.kind, "expression": snippet(model, operand)},
                    )
        yield from self._size_syncs(model)
        yield from self._mask_indexing(model, orders)

    def _device_tensor(self, model: FileModel, expr: cst.BaseExpression, ctx, orders: _OrderIndex) -> bool:
        """A tensor that is not known to be in host memory."""
        if not _is_tensor(model, expr, ctx) or _host_value(model, expr, ctx):
            return False
        return not self._raw_batch(model, expr, ctx, orders)

    def _raw_batch(self, model: FileModel, expr: cst.BaseExpression, ctx, orders: _OrderIndex) -> bool:
        """Rooted at a loader's loop variable that is still in host memory at this point."""
        root = _data_root(model, expr)
        if not isinstance(root, cst.Name):
            return False
        found = model.assignments(root.value, ctx)
        if not found:
            return False
        order = orders.order_of(expr, ctx)
        if order is None:
            # Cannot tell which binding reaches the test: say nothing if any is in host memory.
            return any(_binding_on_host(model, a) for a in found)
        return _still_on_host(model, root.value, ctx, order, expr)

    def _size_syncs(self, model: FileModel) -> Iterator[Report]:
        sites = [s for s in model.calls_to(*_SIZE_SYNC_FUNCTIONS)]
        sites += [s for s in model.calls_to("torch.where") if _one_positional(s.node)]
        for site in sites:
            heat = model.sync_heat(site.ctx)
            if heat is None or not site.node.args or site.node.args[0].star:
                continue
            first = site.node.args[0].value
            if _host_value(model, first, site.ctx) or raw_batch_value(model, first, site):
                continue
            yield self._size_report(model, site, heat)
        for site in model.method_calls(*_SIZE_SYNC_METHODS):
            if site.qualname is not None or site.receiver is None:
                continue
            heat = model.sync_heat(site.ctx)
            if heat is None or not _is_tensor(model, site.receiver, site.ctx):
                continue
            if numpy_value(model, site.receiver, site) or _host_value(model, site.receiver, site.ctx):
                continue
            if raw_batch_value(model, site.receiver, site):
                continue
            yield self._size_report(model, site, heat)

    def _size_report(self, model: FileModel, site: CallSite, heat: Heat) -> Report:
        return self.report(
            site.node,
            "`{expression}` has a data-dependent size: the host waits for the GPU to "
            "count the result on every training step",
            severity=self.severity_for(heat),
            data={"expression": snippet(model, site.node)},
        )

    def _mask_indexing(self, model: FileModel, orders: _OrderIndex) -> Iterator[Report]:
        stores = _StoreTargets()
        for subscript, ctx in _subscripts_in_hot_code(model):
            masks = [
                element.slice.value
                for element in subscript.slice
                if isinstance(element.slice, cst.Index) and self._is_mask(model, element.slice.value, ctx)
            ]
            if not masks:
                continue
            heat = model.sync_heat(ctx)
            if heat is None or not self._device_tensor(model, subscript.value, ctx, orders):
                continue
            if stores.is_store(subscript, ctx):
                continue
            yield self.report(
                subscript,
                "boolean-mask indexing `{expression}` has a data-dependent size: the "
                "host waits for the GPU to count the selected elements on every training step",
                severity=self.severity_for(heat),
                data={"expression": snippet(model, subscript)},
            )

    def _is_mask(self, model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> bool:
        if depth > 3:
            return False
        if isinstance(expr, cst.Comparison):
            return all(isinstance(c.operator, _VALUE_COMPARISONS) for c in expr.comparisons) and _is_tensor(
                model, expr, ctx
            )
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self._is_mask(model, expr.expression, ctx, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self._is_mask(model, expr.left, ctx, depth + 1) or self._is_mask(model, expr.right, ctx, depth + 1)
        if isinstance(expr, cst.Call):
            qual = model.imports.qualify(expr.func) or ""
            head, _, last = qual.rpartition(".")
            if head == "torch" and last in _MASK_FUNCTIONS:
                return True
            func = expr.func
            return (
                not qual
                and isinstance(func, cst.Attribute)
                and func.attr.value in _MASK_METHODS
                and _is_tensor(model, func.value, ctx)
            )
        if isinstance(expr, cst.Name):
            found = model.assignments(expr.value, ctx)
            return bool(found) and all(
                a.value is not None
                and a.index is None
                and not a.augmented
                and self._is_mask(model, a.value, a.ctx, depth + 1)
                for a in found
            )
        return False
