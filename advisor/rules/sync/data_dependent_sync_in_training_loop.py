"""GPU104 `data-dependent-sync-in-training-loop`: tensor truthiness or data-dependent output sizes on every training step."""

from __future__ import annotations
from typing import Iterator, Optional, Tuple
import libcst as cst
from advisor.model.datasets import graph_split_mask
from advisor.model import CallSite, FileModel, Heat
from advisor.model.builder import is_periodic_test
from advisor.model.devices import is_dtype
from advisor.model.walk import children
from advisor.rules.sync import FORWARD_PATH_DOC
from advisor.findings import Severity
from advisor.rules.base import Report, Rule, snippet
from advisor.model.tensors import is_host_tensor, is_numpy, is_raw_batch, is_tensor, loop_sources, value_root
from advisor.model.vocabulary import BATCH_TEXT
from advisor.model.literals import defaulted_literals
from advisor.model.names import dotted_name


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
# Comparison methods a tensor has and a NumPy array has not.
_TORCH_ONLY_COMPARISONS = frozenset({"ne", "eq", "gt", "lt", "ge", "le"})


_MASK_JOINS = frozenset({"torch.stack", "torch.cat", "torch.concat"})
_MASK_FILLERS = frozenset({"torch.ones_like", "torch.zeros_like"})
# Factories that build a mask when given `dtype=torch.bool`.
_BOOL_FACTORIES = frozenset("ones zeros full empty eye ones_like zeros_like full_like empty_like".split())
# torch functions whose result is a mask when their first argument is one (`torch.tril(causal)`).
_MASK_KEEPING = frozenset("tril triu flip roll transpose".split())


def _bound_part(assignment) -> cst.BaseExpression:
    """What a binding gives its name: the element of a literal tuple for `a, b = x, y`, or the
    value itself (`j, k = mask.T` unpacks a mask into masks)."""
    value = assignment.value
    if assignment.index is not None and type(value) in (cst.Tuple, cst.List):
        elements = value.elements
        if assignment.index < len(elements) and not any(type(e) is cst.StarredElement for e in elements):
            return elements[assignment.index].value
        return cst.Name("None")  # not a mask
    return value


# Methods that keep a mask's values and dtype (unless given one): `(s > 0).to(device)`.
# Methods that hand back the same boolean values, moved or reshaped (`valid.view(-1)`).
_MASK_MOVES = frozenset({
    "to", "cuda", "detach", "clone", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze",
    "expand", "expand_as", "permute", "transpose", "t",
})


_VALUE_COMPARISONS = (
    cst.Equal,
    cst.NotEqual,
    cst.LessThan,
    cst.GreaterThan,
    cst.LessThanEqual,
    cst.GreaterThanEqual,
)


_RAW_HINTS = ("batch", "loader-batch", "index")


def _data_root(model: FileModel, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The value an expression computes from: `y` in `torch.isnan(y).any()` or `(y == 0).all()`."""
    for _ in range(8):
        root = value_root(model, expr)
        if not (type(root) is cst.Call and root.args and not root.args[0].star):
            return root
        if not (model.imports.qualify(root.func) or "").startswith("torch."):
            return root
        expr = root.args[0].value
    return expr


def _one_positional(call: cst.Call) -> bool:
    return len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star


def _truth_operands(test: cst.BaseExpression, never=lambda node: False) -> Iterator[Tuple[cst.BaseExpression, bool]]:
    """The parts of a test that Python turns into `bool`: `a and not b` gives `a` and `b`, each
    with whether a periodic test before it short-circuits it (`step % 100 == 0 and loss > 9`).
    Identity and membership tests (`x is None`, `k in d`) never read a tensor's value (but a number
    tested against a tensor, `0 in mask`, reads the whole comparison back), nor does
    what follows `flag and` when ``never(flag)`` (a flag no run turns on)."""
    stack = [(test, False)]
    while stack:
        node, gated = stack.pop()
        if type(node) is cst.BooleanOperation:
            if type(node.operator) is cst.And and never(node.left):
                stack.append((node.left, gated))
                continue
            short = type(node.operator) is cst.And and is_periodic_test(node.left)
            stack.extend(((node.right, gated or short), (node.left, gated)))
        elif type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
            stack.append((node.expression, gated))
        elif type(node) is cst.Comparison and any(
            type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in node.comparisons
        ):
            # `0 in attention_mask`: a tensor's `__contains__` compares every element and reads
            # the answer back. Only a number tested against it: `"labels" in batch` asks a dict.
            if len(node.comparisons) == 1 and type(node.comparisons[0].operator) in (cst.In, cst.NotIn) and _number(node.left):
                yield node.comparisons[0].comparator, gated
            continue
        else:
            yield node, gated


def _number(expr: cst.BaseExpression) -> bool:
    """A numeric literal (`0`, `-100`, `0.5`)."""
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        expr = expr.expression
    return type(expr) in (cst.Integer, cst.Float)


def _never_on(model: FileModel, expr: cst.BaseExpression, ctx) -> bool:
    """A flag (`error_if_nonfinite`, `self.debug`) that every run of the project leaves false:
    a parameter no call turns on, or an attribute set only from one."""
    if dotted_name(expr) is None:
        return False
    found = defaulted_literals(model, expr, ctx, model.order_of(expr))
    return found.complete and found.option is None and bool(found.values) and not any(v for _, v in found.values)


class _StoreTargets:
    """Subscripts that are assigned to (`out[mask] = 0`, not `out[mask] += 1`, which reads them
    first), found by walking one loop or function body the first time a candidate there is seen."""

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
                if type(current) is cst.Assign:
                    for target in current.targets:
                        targets.update(_subscript_ids(target.target))
                elif type(current) is cst.AnnAssign:
                    targets.update(_subscript_ids(current.target))
                elif type(current) is cst.Del:
                    targets.update(_subscript_ids(current.target))
                stack.extend(children(current))
            self._walked[id(scope)] = targets
        return id(subscript) in targets


def _subscript_ids(target: cst.BaseExpression) -> set:
    if type(target) is cst.Subscript:
        return {id(target)}
    if type(target) in (cst.Tuple, cst.List):
        out: set = set()
        for element in target.elements:
            out |= _subscript_ids(element.value)
        return out
    if type(target) is cst.StarredElement:
        return _subscript_ids(target.value)
    return set()


class DataDependentSyncInTrainingLoop(Rule):
    code = "GPU104"
    name = "data-dependent-sync-in-training-loop"
    summary = "tensor truthiness or data-dependent output sizes on every training step"
    what = """
        Inside the innermost training loop: an `if` (statement or `a if test else b`), `while`, `assert` or comprehension `if`
        clause that tests a tensor (`if (x != 0).all():`, `if loss > 10:`, `while not
        torch.isfinite(loss):`, `[t for t in terms if t > 0]`, `if 0 in attention_mask:`, a
        number looked up in a tensor, which compares every element), and the operations whose output
        size depends on the values: `nonzero()`, `argwhere`, one-argument `torch.where(cond)`,
        `masked_select`, `unique()`, indexing with a boolean mask (`logits[labels != -100]`,
        or a name bound to such a comparison, or to a product of two, `(y2 > y1) * (x2 > x1)`, or
        to a tensor cast to booleans, `mask.flatten(1).to(torch.bool)`, or to a mask reduced
        along a dim, `torch.logical_and(xy > 0, xy < 1).all(dim=-1)`, or to what a project helper
        returns when each of its returns is such a mask, `occ_mask = get_occlusion_mask(...)`, or to
        a tensor's own comparison method, `target_mask.ne(0)`, which NumPy arrays lack, also
        compared again, `target_mask[..., 1:].ne(0).view(-1) == 1`, or a torch_geometric
        dataset graph's split mask, `data.train_mask` of `data = dataset[0]`), a store through a mask that is not a plain
        masked fill (`m[rows, keep] = 1.0`, `m[:, keep] *= 0.5`), and slicing with a bound
        that is a tensor on the device (`ws[:, cutoff:]`), and Python's own `max()` or `min()`
        of several values, one a tensor (`loss / max(1, n_tokens)`: they compare and test the
        result as an `if` does). Tests on Python values, integer or
        slice indexes, masked fills (`out[keep] = 0`, `out[:, keep] = 0`), masks in host memory
        (a factory without `device=`, or a `torch.cat` of a list of such parts), and batches
        still in host memory (before they are moved) are left alone. Under a periodic condition
        it is only informational (not under a rank-0 check alone, which one GPU passes every
        step), and so is boolean-mask indexing in an arm no run takes (`elif args.model ==
        "basic":` where the option's default and every documented command pick another model).
    """ + FORWARD_PATH_DOC
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
    fix_safety = """
        No automatic fix. Replacing a data-dependent branch or a boolean-mask index with a
        fixed-shape form (`torch.where`, `masked_fill`, `ignore_index`) changes what the code
        computes when the condition is rare, and testing every N steps changes when it reacts.
    """
    references = (
        (
            "Performance Tuning Guide: avoid unnecessary CPU-GPU synchronization",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization",
        ),
        ("torch.nonzero", "https://docs.pytorch.org/docs/stable/generated/torch.nonzero.html"),
        ("torch.where", "https://docs.pytorch.org/docs/stable/generated/torch.where.html"),
        (
            "torch.cuda.set_sync_debug_mode",
            "https://docs.pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html",
        ),
    )
    requires = (("if", "while", "assert", "nonzero", "where", "masked_select", "unique", "[", "max(", "min("), BATCH_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        for condition in model.facts.conditions:
            ctx = condition.ctx
            if condition.kind == "while" and condition.loop is not None:
                ctx = ctx.derive(loop=condition.loop)  # the test runs on every iteration of its loop
            heat = model.batch_heat(ctx)
            if heat is None:
                continue
            never = lambda node, c=condition: _never_on(model, node, c.ctx)  # noqa: E731
            for operand, short_circuited in _truth_operands(condition.test, never):
                if self._device_tensor(model, operand, ctx):
                    yield self.report(
                        operand,
                        "`{statement}` on tensor `{expression}` copies it to the host "
                        "and waits for the GPU on every training step",
                        severity=self.severity_for(Heat.GATED if short_circuited else heat),
                        data={"statement": condition.kind, "expression": snippet(model, operand)},
                    )
        yield from self._size_syncs(model)
        yield from self._mask_indexing(model)
        yield from self._builtin_comparisons(model)

    def _builtin_comparisons(self, model: FileModel) -> Iterator[Report]:
        """`max(1, count)`, `min(a, b)`: Python's own max and min compare their arguments with
        `>`/`<` and test the result, which reads a tensor back like an `if` does."""
        for name in ("max", "min"):
            for site in model.facts.calls_by_callee.get(name, ()):
                args = site.node.args
                if model.imports.qualify(site.node.func) is not None or len(args) < 2 or any(
                    a.keyword is not None or a.star for a in args
                ):
                    continue
                heat = model.batch_heat(site.ctx)
                if heat is None:
                    continue
                for arg in args:
                    if self._device_tensor(model, arg.value, site.ctx):
                        yield self.report(
                            arg.value,
                            "Python's `{builtin}()` compares tensor `{expression}` and tests the result: it copies "
                            "it to the host and waits for the GPU on every training step",
                            severity=self.severity_for(heat),
                            data={"builtin": name, "expression": snippet(model, arg.value)},
                        )
                        break

    def _device_tensor(self, model: FileModel, expr: cst.BaseExpression, ctx) -> bool:
        """A tensor that is not known to be in host memory, where the test reads it (not at the
        end of the function: `if parts:` on a list that later becomes a tensor)."""
        order = model.order_of(expr)
        if not is_tensor(model, expr, ctx, order) or is_host_tensor(model, expr, ctx, order):
            return False
        root = _data_root(model, expr)
        return not (type(root) is cst.Name and is_raw_batch(model, root, ctx, model.order_of(expr)))

    def _size_syncs(self, model: FileModel) -> Iterator[Report]:
        sites = [s for s in model.calls_to(*_SIZE_SYNC_FUNCTIONS)]
        sites += [s for s in model.calls_to("torch.where") if _one_positional(s.node)]
        for site in sites:
            heat = model.batch_heat(site.ctx)
            if heat is None or not site.node.args or site.node.args[0].star:
                continue
            first = site.node.args[0].value
            if is_host_tensor(model, first, site.ctx, site.order) or is_raw_batch(model, first, site.ctx, site.order):
                continue
            yield self._size_report(model, site, heat)
        counted = None
        for site in model.method_calls(*_SIZE_SYNC_METHODS):
            if site.qualname is not None or site.receiver is None:
                continue
            heat = model.batch_heat(site.ctx)
            receiver = site.receiver
            if heat is None:
                continue
            if not is_tensor(model, receiver, site.ctx, site.order):
                if counted is None:
                    # `indices.unique().numel()`: only a tensor has both (NumPy's arrays have
                    # `.size`, pandas' `.unique()` returns an array).
                    counted = {id(s.receiver) for s in model.method_calls("numel") if s.receiver is not None}
                if id(site.node) not in counted or is_raw_batch(model, receiver, site.ctx, site.order):
                    continue
            if is_numpy(model, receiver, site.ctx, site.order) or is_host_tensor(model, receiver, site.ctx, site.order):
                continue
            if is_raw_batch(model, receiver, site.ctx, site.order):
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

    def _mask_indexing(self, model: FileModel) -> Iterator[Report]:
        stores = _StoreTargets()
        for subscript, ctx in model.facts.subscripts:
            bound = self._device_slice_bound(model, subscript, ctx)
            if bound is not None:
                heat = model.batch_heat(ctx)
                if heat is not None:
                    yield self.report(
                        bound,
                        "slice bound `{expression}` is a tensor: Python reads its value back from the "
                        "GPU to slice, on every training step",
                        severity=self.severity_for(heat),
                        data={"expression": snippet(model, bound)},
                    )
                continue
            masks = [
                element.slice.value
                for element in subscript.slice
                if type(element.slice) is cst.Index and self._is_mask(model, element.slice.value, ctx)
            ]
            if not masks or any(is_host_tensor(model, m, ctx) for m in masks):
                continue  # a mask in host memory is counted on the host: nothing is read back
            heat = model.batch_heat(ctx)
            if heat is None or not self._device_tensor(model, subscript, ctx):
                continue
            if stores.is_store(subscript, ctx) and not self._indexed_store(model, subscript, masks, ctx):
                continue  # `out[:, keep] = 0` is a masked fill on the device
            # In an arm no run takes (`elif args.model == 'basic':` where every run passes
            # another model): information.
            yield self.report(
                subscript,
                "boolean-mask indexing `{expression}` has a data-dependent size: the "
                "host waits for the GPU to count the selected elements on every training step",
                severity=Severity.INFO if model.guards.dead(ctx) else self.severity_for(heat),
                data={"expression": snippet(model, subscript)},
            )

    def _indexed_store(self, model: FileModel, subscript: cst.Subscript, masks: list, ctx) -> bool:
        """A store through a mask and a tensor of positions besides (`m[rows, keep] = 1.0`): not a
        masked fill, so the mask's true elements are counted first, on the host."""
        return any(
            type(element.slice) is cst.Index
            and not any(element.slice.value is m for m in masks)
            and is_tensor(model, element.slice.value, ctx)
            for element in subscript.slice
        )

    def _device_slice_bound(self, model: FileModel, subscript: cst.Subscript, ctx) -> Optional[cst.BaseExpression]:
        """A bound of a slice (`ws[:, cutoff:]`) that is a tensor not known to be in host memory:
        slicing calls its `__index__`, a copy to the host, whether the slice is read or stored."""
        for element in subscript.slice:
            if type(element.slice) is cst.Slice:
                for bound in (element.slice.lower, element.slice.upper, element.slice.step):
                    if bound is not None and not type(bound) is cst.Integer and self._device_tensor(model, bound, ctx):
                        return bound
        return None

    def _is_mask(self, model: FileModel, expr: cst.BaseExpression, ctx, depth: int = 0) -> bool:
        if depth > 6:
            return False
        if type(expr) is cst.Comparison:
            if not all(isinstance(c.operator, _VALUE_COMPARISONS) for c in expr.comparisons):
                return False
            # `target_mask.ne(0).view(-1) == 1`: a mask compared again is a mask
            return is_tensor(model, expr, ctx) or self._is_mask(model, expr.left, ctx, depth + 1)
        if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.BitInvert:
            return self._is_mask(model, expr.expression, ctx, depth + 1)
        if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.BitAnd, cst.BitOr, cst.BitXor):
            return self._is_mask(model, expr.left, ctx, depth + 1) or self._is_mask(model, expr.right, ctx, depth + 1)
        if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
            # `(y2 > y1) * (x2 > x1)`: the product of two masks is a mask (times a number it is not)
            return self._is_mask(model, expr.left, ctx, depth + 1) and self._is_mask(model, expr.right, ctx, depth + 1)
        if type(expr) is cst.Attribute and expr.attr.value in ("T", "mT"):
            return self._is_mask(model, expr.value, ctx, depth + 1)
        if type(expr) is cst.Attribute and graph_split_mask(model, expr, ctx, model.order_of(expr)):
            return True  # `data.train_mask` of a torch_geometric dataset's graph
        if type(expr) is cst.Call:
            qual = model.imports.qualify(expr.func) or ""
            head, _, last = qual.rpartition(".")
            if head == "torch" and last in _MASK_FUNCTIONS:
                return True
            if qual in _MASK_JOINS:
                return self._joined_masks(model, expr, ctx, depth)
            if head == "torch" and last in _MASK_KEEPING:
                first = expr.args[0] if expr.args else None
                return (first is not None and first.keyword is None and not first.star
                        and self._is_mask(model, first.value, ctx, depth + 1))
            if head == "torch" and last in _BOOL_FACTORIES:
                dtype = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "dtype"), None)
                return dtype is not None and model.imports.qualify(dtype) == "torch.bool"  # `torch.ones_like(x, dtype=torch.bool)`
            func = expr.func
            if depth < 3 and (not qual or model.symbol(qual) is not None):
                # `occ_mask = get_occlusion_mask(...)`: a helper of the project whose every
                # return is a mask
                targets = model.calls.targets_of_expression(expr, ctx, model.order_of(expr))
                if targets and all(
                        info.return_sites and all(r.value is not None and (
                            self._is_mask(owner, r.value, r.ctx, depth + 1) or self._compared_here(model, expr, r.value, ctx))
                            for r in info.return_sites)
                        for owner, info in targets):
                    return True
            if qual or not type(func) is cst.Attribute:
                return False
            if func.attr.value in _MASK_MOVES and not any(is_dtype(model, a.value) for a in expr.args):
                return self._is_mask(model, func.value, ctx, depth + 1)  # `(s > 0).to(device)`: still a mask
            if func.attr.value in ("all", "any") and expr.args:
                # `torch.logical_and(xy > 0, xy < 1).all(dim=-1)`: a mask reduced along one dim
                return self._is_mask(model, func.value, ctx, depth + 1)
            if func.attr.value in ("to", "type") and any(
                    (a.keyword is None or a.keyword.value == "dtype") and model.imports.qualify(a.value) == "torch.bool"
                    for a in expr.args):
                # `bool_masked_pos.flatten(1).to(torch.bool)`: cast to booleans, a mask
                return is_tensor(model, func.value, ctx)
            if func.attr.value in _TORCH_ONLY_COMPARISONS and len(expr.args) == 1:
                # `target_mask.ne(0)`: NumPy arrays have no such method; a tensor's comparison
                return True
            return func.attr.value in _MASK_METHODS and is_tensor(model, func.value, ctx)
        if type(expr) is cst.Name:
            sources = loop_sources(model, expr, ctx, model.order_of(expr))
            if sources:  # `for ids, m in zip(input_ids, masks)`: the rows of masks are masks
                return all(self._is_mask(model, source, c, depth + 1) for source, c, _ in sources)
            reach = model.bindings.reaching(expr.value, ctx, model.order_of(expr))
            found = reach.assignments
            return reach.closed and reach.parameter is None and bool(found) and all(
                a.value is not None
                and not a.augmented
                and self._is_mask(model, _bound_part(a), a.ctx, depth + 1)
                for a in found
            )
        return False

    @staticmethod
    def _compared_here(model: FileModel, call: cst.Call, returned: cst.BaseExpression, ctx) -> bool:
        """`def is_known(labels): return labels >= 0`, called here on a tensor: the comparison
        the helper returns is a mask at this call, whatever its other callers pass."""
        return (type(returned) is cst.Comparison and all(isinstance(c.operator, _VALUE_COMPARISONS) for c in returned.comparisons)
                and is_tensor(model, call, ctx))

    def _joined_masks(self, model: FileModel, call: cst.Call, ctx, depth: int) -> bool:
        """`torch.stack((torch.ones_like(j), j, k))`: masks joined into one, with at most
        all-true or all-false fillers shaped like them."""
        parts = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
        if not type(parts) in (cst.List, cst.Tuple) or not parts.elements:
            return False
        masks = 0
        for element in parts.elements:
            value = element.value
            if type(element) is cst.StarredElement:
                return False
            if self._is_mask(model, value, ctx, depth + 1):
                masks += 1
            elif not (
                type(value) is cst.Call
                and model.imports.qualify(value.func) in _MASK_FILLERS
                and _one_positional(value)
                and self._is_mask(model, value.args[0].value, ctx, depth + 1)
            ):
                return False
        return masks > 0
