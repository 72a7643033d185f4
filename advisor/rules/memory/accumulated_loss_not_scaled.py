"""GPU406 `accumulated-loss-not-scaled`: gradient accumulation without dividing the loss by the number of micro-batches."""

from __future__ import annotations
import re
from typing import Iterator, Optional, Set
import libcst as cst
from advisor.model import CallSite, Context, FileModel, LoopInfo
from advisor.model.facts import FunctionInfo
from advisor.model.file_model import call_argument
from advisor.model.literals import literal_values
from advisor.model.names import dotted_name
from advisor.model.subtree import iter_names
from advisor.findings import Severity
from advisor.rules.base import Report, Rule
from advisor.rules.memory.walks import walk


_OPTIMIZER_RECEIVER = re.compile(r"optim|(^|_)opt($|_)|scaler", re.IGNORECASE)


# Helpers that rescale gradients in place before the step: `scale_grads`, `scale_grads_`,
# `_grad_scaler`, `rescale_gradients`, `normalize_grads`.
_RESCALES_GRADS = re.compile(r"^_?(scale_grads?_?|rescale_grad(s|ients)?_?|normali[sz]e_grad(s|ients)?_?|grad_scaler)$", re.IGNORECASE)
_ACCUMULATION_NAME = re.compile(r"accum|grad_acc|gradient_acc", re.IGNORECASE)


_NOT_ACCUMULATION = re.compile(r"log|print|eval|save|ckpt|checkpoint|report|sample|display", re.IGNORECASE)


# The batch size, by name (`bs`, `batch_size`, `n_samples`) or by what it is bound to.
_BATCH_SIZE = re.compile(r"^(bs|batch_size|batchsize|n_samples|num_samples)$", re.IGNORECASE)


def _scale_free(model: FileModel, step: CallSite, loop: LoopInfo) -> bool:
    """The optimizer that steps (`opt.step()`, or the one handed to `scaler.step(opt)`) is an
    adaptive one on every path, and the loop clips no gradients: the update hardly depends on
    the gradients' scale."""
    stepped = step.receiver
    if "scaler" in model.kinds(stepped, step.ctx, step.order) and step.node.args:
        stepped = step.node.args[0].value
    if stepped is None or not model.kinds(stepped, step.ctx, step.order).get("adaptive_optimizer"):
        return False
    return not any("clip_grad" in (site.qualname or site.method or "") for site in loop.sites)


def _counts_batch(value: cst.BaseExpression) -> bool:
    """`x.shape[0]`, `x.size(0)` or `len(x)`."""
    if type(value) is cst.Subscript and type(value.value) is cst.Attribute and value.value.attr.value == "shape":
        index = value.slice[0].slice if len(value.slice) == 1 else None
        return type(index) is cst.Index and type(index.value) is cst.Integer and index.value.value == "0"
    if type(value) is cst.Call and value.args:
        func = value.func
        first = value.args[0].value
        if type(func) is cst.Attribute and func.attr.value == "size":
            return type(first) is cst.Integer and first.value == "0"
        return type(func) is cst.Name and func.value == "len"
    return False


def _modulus(test: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    for node in walk(test):
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo:
            return node.right
    return None


class AccumulatedLossNotScaled(Rule):
    code = "GPU406"
    name = "accumulated-loss-not-scaled"
    summary = "gradient accumulation without dividing the loss by the number of micro-batches"
    what = """
        A hot loop that runs `backward()` on every iteration but steps the optimizer only under
        `if (i + 1) % k == 0` (or `step % k == 0`), where the loss is never divided by `k`: no
        `loss / k` in the backward expression (also one handed by keyword,
        `booster.backward(loss=loss / k, ...)`; `k` may be a settings dict's entry,
        `args["gradient_accumulation_steps"]`), no `loss = loss / k` or `loss /= k`, no division
        by that name in the assignments leading to the loss or in a same-module helper that
        computes it; or, in the same way, an inner `for _ in range(k):` that runs `backward()`
        on a new batch each pass (`next(loader)`, or a count named for accumulation,
        `GRADIENT_ACCUMULATE_EVERY`) with the optimizer stepping once after it (a loop over
        tasks or loss terms, which draws no batch, is meant to add up). Reported at the backward call. Criteria with `reduction="sum"`, a loss
        summed over its samples (`loss = loss.sum()`), loss
        functions or loss objects of the project that return the loss multiplied by the batch
        size (`return loss * bs` with `bs = x.shape[0]`: a sum over samples), Accelerate
        (which divides inside `accelerator.backward`), DeepSpeed and Lightning are left alone. When the
        optimizer that steps is an adaptive one on every path (`torch.optim.Adam`, `AdamW`,
        `RMSprop`, `Adagrad` and their kin) and the loop clips no gradients, it is
        informational: these divide each gradient by a running measure of its size, so a sum
        `k` times too large moves the weights almost as the mean would. A loop that zeroes the
        gradients before every backward (an ungated `optimizer.zero_grad()` in the block of the
        backward or one around it) accumulates nothing: the `%` test only skips updates. Nor
        does one whose `k` is 1 on every run the project ships: an option defaulting to 1 that
        no command passes otherwise, or a setting every JSON config file the script's commands
        pass (`--config configs/pretrain.json`) sets to 1.
    """
    why = """
        Gradients of successive backward calls add up. Without the division the accumulated
        gradient is `k` times the mean gradient of the large batch it stands for, so every
        update is `k` times too large: the effective learning rate silently depends on the
        accumulation setting, and with Adam-free optimizers (SGD) training often diverges.
        Gradient clipping then also clips at the wrong scale.
    """
    example = """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
    """
    instead = """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum_steps
            loss.backward()
            if (i + 1) % accum_steps == 0:
                optimizer.step()
                optimizer.zero_grad()
    """
    hint = "divide the loss by the accumulation count before backward (`loss = loss / k`)"
    fix_safety = """
        No automatic fix. Dividing the loss changes the size of every update, so learning rates
        tuned for the undivided loss would need retuning, and where the division belongs (the
        loss, the criterion, a helper) depends on the code.
    """
    references = (
        (
            "CUDA automatic mixed precision examples: gradient accumulation",
            "https://docs.pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation",
        ),
        (
            "Accelerate: performing gradient accumulation",
            "https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation",
        ),
    )
    requires = (("%", "range("), ("backward",), (".step(",))

    def check(self, model: FileModel) -> Iterator[Report]:
        if model.uses_framework("accelerate", "deepspeed", "lightning", "pytorch_lightning"):
            return
        if self._sum_reduction(model):
            return
        reported: Set[int] = set()
        for step in model.method_calls("step"):
            test = step.ctx.gate_test
            receiver = (step.receiver_name or "").rsplit(".", 1)[-1]
            if test is None or not _OPTIMIZER_RECEIVER.search(receiver) or "sched" in receiver.lower():
                continue
            loop = model.enclosing_training_loop(step.ctx)
            if loop is None or loop.function is not step.ctx.function or not model.is_hot_loop(loop):
                continue
            if self._steps_every_iteration(model, loop):
                continue  # another optimizer steps every iteration (a GAN critic): its backward
            if self._gradients_rescaled(model, loop):
                continue  # `scale_grads(model, 1 / num_tokens)` before the step normalises the sum
            k = _modulus(test)
            if k is None or (type(k) is cst.Integer and k.evaluated_value <= 1):
                continue
            if model.guards.every_pass_unless_asked(step.ctx):
                continue  # a count of 1 on every run the project ships: no accumulation
            k_name = dotted_name(k)
            if k_name is not None and _NOT_ACCUMULATION.search(k_name.rsplit(".", 1)[-1]):
                continue
            names = self._divisor_names(model, k, step.ctx)
            for backward in model.method_calls("backward"):
                ctx = backward.ctx
                if id(backward.node) in reported or ctx.function is not loop.function or ctx.gated:
                    continue
                if model.enclosing_training_loop(ctx) is not loop:
                    continue
                value = self._backward_value(backward)
                if value is None or self._scaled(model, value, ctx, names, k):
                    continue
                if _zeroed_before(model, loop, backward):
                    continue  # `zero_grad()` before every backward: nothing accumulates
                reported.add(id(backward.node))
                shown = model.code(k).strip()
                yield self.report(
                    backward.node,
                    "gradients accumulate over `{steps}` micro-batches but the loss is not divided by "
                    "`{steps}`: each update is `{steps}` times too large",
                    # An adaptive optimizer (Adam) divides the scale out again: only its `eps`
                    # sees it, so the cost is small unless the gradients are clipped.
                    severity=Severity.INFO if _scale_free(model, step, loop) else self.severity,
                    # accum_steps: the count itself where it is written as a number, for the probe
                    data={"steps": shown, "accum_steps": k.evaluated_value if type(k) is cst.Integer else None},
                )
        yield from self._micro_batch_loops(model, reported)

    def _micro_batch_loops(self, model: FileModel, reported: Set[int]) -> Iterator[Report]:
        """`for _ in range(k): loss = model(next(loader)); loss.backward()`, then one optimizer
        step after that loop: a fixed count of micro-batches per step."""
        # The optimizer steps of each loop's own body, gathered once (not per backward call).
        steps_by_loop: dict = {}
        for s in model.method_calls("step"):
            receiver = s.receiver_name or ""
            if (s.ctx.loop is not None and not s.ctx.gated and "sched" not in receiver.lower()
                    and _OPTIMIZER_RECEIVER.search(receiver.rsplit(".", 1)[-1])):
                steps_by_loop.setdefault(id(s.ctx.loop), []).append(s)
        for backward in model.method_calls("backward"):
            ctx = backward.ctx
            inner = ctx.loop
            if inner is None or ctx.gated or id(backward.node) in reported:
                continue
            k = _range_count(inner)
            if k is None or (type(k) is cst.Integer and k.evaluated_value <= 1):
                continue
            outer = inner.parent
            if inner.has_step or inner.loose_step or outer is None or not outer.own_step:
                continue
            steps = [s for s in steps_by_loop.get(id(outer), ()) if s.order > inner.end]
            if not steps or not _draws_micro_batches(model, inner, k):
                continue
            values = literal_values(model, k, inner.ctx, inner.start)
            if values.complete and {value for _, value in values.values} <= {1}:
                continue  # a count of 1 on every path: one batch per step
            value = self._backward_value(backward)
            if value is None or self._scaled(model, value, ctx, self._divisor_names(model, k, ctx), k):
                continue
            if _zeroed_before(model, inner, backward):
                continue
            reported.add(id(backward.node))
            shown = model.code(k).strip()
            yield self.report(
                backward.node,
                "gradients accumulate over `{steps}` micro-batches but the loss is not divided by "
                "`{steps}`: each update is `{steps}` times too large",
                severity=Severity.INFO if _scale_free(model, steps[0], outer) else self.severity,
                data={"steps": shown, "accum_steps": k.evaluated_value if type(k) is cst.Integer else None},
            )

    @staticmethod
    def _gradients_rescaled(model: FileModel, loop: LoopInfo) -> bool:
        """The loop rescales the summed gradients itself before stepping: a helper named for it
        (`training.scale_grads(model, 1 / num_tokens)`), or `p.grad.div_(n)` / `p.grad /= n`.
        The loss is then summed on purpose (times its token count) and divided once."""
        for site in loop.sites:
            name = dotted_name(site.node.func) or ""
            last = name.rsplit(".", 1)[-1]
            if _RESCALES_GRADS.match(last):
                return True
            if site.method in ("div_", "mul_") and ".grad" in (site.receiver_name or ""):
                return True
        return any(
            a.augmented and a.target.endswith(".grad") and a.ctx.loop is not None and a.ctx.loop.within(loop)
            for (_, target), found in model.facts.assignments.items() if target.endswith(".grad") for a in found
        )

    def _steps_every_iteration(self, model: FileModel, loop: LoopInfo) -> bool:
        for site in model.method_calls("step"):
            receiver = (site.receiver_name or "").rsplit(".", 1)[-1]
            if not _OPTIMIZER_RECEIVER.search(receiver) or "sched" in receiver.lower():
                continue
            if site.ctx.function is loop.function and not site.ctx.gated and (site.ctx.loop is not None and site.ctx.loop.within(loop)):
                if model.enclosing_training_loop(site.ctx) is loop:
                    return True
        return False

    def _sum_reduction(self, model: FileModel) -> bool:
        for site in model.facts.calls:
            arg = call_argument(site.node, "reduction", None)
            if arg is not None and type(arg.value) is cst.SimpleString and arg.value.evaluated_value == "sum":
                return True
            if call_argument(site.node, "accumulate_grad_batches", None) is not None:
                return True
        return bool(model.method_calls("accumulate"))

    @staticmethod
    def _backward_value(site: CallSite) -> Optional[cst.BaseExpression]:
        call = site.node
        if call.args and call.args[0].keyword is None:
            return call.args[0].value
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "loss":
                return arg.value  # `booster.backward(loss=loss / accumulation_steps, optimizer=opt)`
        receiver = site.receiver
        if type(receiver) is cst.Call and type(receiver.func) is cst.Attribute:
            if receiver.func.attr.value == "scale" and receiver.args:
                return receiver.args[0].value
        return receiver

    def _divisor_names(self, model: FileModel, k: cst.BaseExpression, ctx: Context) -> Set[str]:
        """Spellings of the accumulation count: `accum`, `args.accum_steps` and their last parts."""
        names: Set[str] = set()
        dotted = dotted_name(k)
        if dotted is None:
            key = _string_key(k)
            if key is not None:
                names.add(key)  # `args["gradient_accumulation_steps"]`
            return names
        spellings = [dotted]
        for assignment in model.assignments(dotted, ctx):
            other = dotted_name(assignment.value) if assignment.value is not None else None
            if other is not None:
                spellings.append(other)
        for spelling in spellings:
            names.add(spelling)
            names.add(spelling.rsplit(".", 1)[-1])
        return names

    def _mentions(self, node: cst.CSTNode, names: Set[str], k: cst.BaseExpression) -> bool:
        for current in walk(node):
            if type(current) in (cst.Name, cst.Attribute):
                dotted = dotted_name(current) or ""
                last = dotted.rsplit(".", 1)[-1]
                if dotted in names or last in names or _ACCUMULATION_NAME.search(last):
                    return True
            elif type(current) is cst.SimpleString and isinstance(current.evaluated_value, str):
                # `loss / args["gradient_accumulation_steps"]`: the count kept in a settings dict
                key = current.evaluated_value
                if key in names or _ACCUMULATION_NAME.search(key):
                    return True
            elif type(current) is cst.Integer and type(k) is cst.Integer:
                if current.evaluated_value == k.evaluated_value:
                    return True
        return False

    def _divides(self, node: cst.CSTNode, names: Set[str], k: cst.BaseExpression) -> bool:
        """A division (or `.div()`, `* (1 / k)`) by the accumulation count inside ``node``."""
        for current in walk(node):
            if type(current) is cst.BinaryOperation and type(current.operator) in (cst.Divide, cst.FloorDivide, cst.Multiply):
                if self._mentions(current.right, names, k) or (
                    type(current.operator) is cst.Multiply and self._mentions(current.left, names, k)
                ):
                    return True
            elif type(current) is cst.Call and type(current.func) is cst.Attribute:
                if current.func.attr.value in ("div", "div_", "true_divide", "mul", "mul_"):
                    if any(self._mentions(a.value, names, k) for a in current.args):
                        return True
        return False

    def _scaled(
        self, model: FileModel, value: cst.BaseExpression, ctx: Context, names: Set[str], k: cst.BaseExpression
    ) -> bool:
        if self._divides(value, names, k):
            return True
        seen: Set[str] = set()
        pending = [(name, 0) for name in iter_names(value)]
        while pending:
            name, depth = pending.pop()
            if name in seen or depth > 3:
                continue
            seen.add(name)
            for call in model.facts.with_targets.get((ctx.scope, name), ()):
                # `with amp.scale_loss(loss, optimizer) as scaled_loss:` scales what it is given
                pending.extend((n, depth + 1) for a in call.args for n in iter_names(a.value))
            for assignment in model.assignments(name, ctx):
                statement, assigned = assignment.statement, assignment.value
                if assigned is None:
                    continue
                if type(statement) is cst.AugAssign and type(statement.operator) in (cst.DivideAssign, cst.MultiplyAssign):
                    if self._mentions(assigned, names, k):
                        return True
                if self._divides(assigned, names, k) or self._helper_divides(model, assigned, ctx, names, k):
                    return True
                if self._summed_over_batch(model, assigned, assignment.ctx, assignment.order) or _summed(model, assigned):
                    return True
                pending.extend((n, depth + 1) for n in iter_names(assigned))
        return False

    def _helper_divides(
        self, model: FileModel, value: cst.BaseExpression, ctx: Context, names: Set[str], k: cst.BaseExpression
    ) -> bool:
        """A same-module function computing the loss (one level deep) that is handed the count or
        divides by something that is not a literal: give it the benefit of the doubt."""
        for current in walk(value):
            if not type(current) is cst.Call:
                continue
            info = self._local_function(model, current.func, ctx)
            if info is None:
                continue
            if any(self._mentions(a.value, names, k) for a in current.args):
                return True
            for node in walk(info.node.body):
                if type(node) is cst.BinaryOperation and type(node.operator) is cst.Divide:
                    if not type(node.right) in (cst.Integer, cst.Float):
                        return True
                if type(node) is cst.AugAssign and type(node.operator) is cst.DivideAssign:
                    return True
        return False

    def _summed_over_batch(self, model: FileModel, value: cst.BaseExpression, ctx: Context, order: int) -> bool:
        """The loss comes from a project function (or loss object's `__call__`) that returns it
        multiplied by the batch size (`return loss * bs, ...` with `bs = x.shape[0]`): a sum
        over samples, like `reduction="sum"`, whose scale the author sets on purpose."""
        for current in walk(value):
            if not type(current) is cst.Call:
                continue
            for _, info in model.calls.targets_of_expression(current, ctx, order):
                for returned in info.returns:
                    first = returned.elements[0].value if type(returned) is cst.Tuple and returned.elements else returned
                    if self._times_batch_size(info, first):
                        return True
        return False

    @staticmethod
    def _times_batch_size(info: FunctionInfo, value: cst.BaseExpression) -> bool:
        if not type(value) is cst.BinaryOperation or not type(value.operator) is cst.Multiply:
            return False
        for side in (value.left, value.right):
            name = dotted_name(side)
            if name is None:
                continue
            if _BATCH_SIZE.search(name.rsplit(".", 1)[-1]):
                return True
            for node in walk(info.node.body):
                if type(node) is cst.Assign and any(dotted_name(t.target) == name for t in node.targets):
                    if _counts_batch(node.value):
                        return True
        return False

    @staticmethod
    def _local_function(model: FileModel, func: cst.BaseExpression, ctx: Context) -> Optional[FunctionInfo]:
        if type(func) is cst.Name:
            return model.function(func.value) if model.imports.qualify(func) is None else None
        if type(func) is cst.Attribute and dotted_name(func.value) in ("self", "cls") and ctx.class_name:
            return model.resolve(f"{ctx.class_name}.{func.attr.value}")
        return None


def _summed(model: FileModel, value: cst.BaseExpression) -> bool:
    """`loss = loss.sum()` (or `torch.sum(loss)`) of a per-sample loss: a sum over samples, like
    `reduction="sum"`, whose scale does not depend on how many micro-batches make a step."""
    if type(value) is not cst.Call or any(a.keyword is not None for a in value.args):
        return False
    if type(value.func) is cst.Attribute and value.func.attr.value == "sum":
        return not value.args and model.imports.qualify(value.func) is None
    return model.imports.qualify(value.func) == "torch.sum" and len(value.args) == 1


def _range_count(loop: LoopInfo) -> Optional[cst.BaseExpression]:
    """The `k` of `for _ in range(k):` (a lone argument)."""
    node = loop.node
    if type(node) is not cst.For or type(node.iter) is not cst.Call:
        return None
    call = node.iter
    if not (type(call.func) is cst.Name and call.func.value == "range") or len(call.args) != 1 or call.args[0].keyword:
        return None
    return call.args[0].value


# A count named for accumulation (`GRADIENT_ACCUMULATE_EVERY`, `args.accum_steps`).
_ACCUMULATION_NAME = re.compile(r"accum|accumulat", re.IGNORECASE)


def _draws_micro_batches(model: FileModel, loop: LoopInfo, k: cst.BaseExpression) -> bool:
    """Each pass of the loop takes a new batch (`next(loader)`, a loop over a loader) or its
    count is named for accumulation: micro-batches of one step, not tasks or terms whose
    gradients are meant to add up."""
    if loop.drawn or loop.over_loader:
        return True
    name = dotted_name(k)
    return name is not None and bool(_ACCUMULATION_NAME.search(name.rsplit(".", 1)[-1]))


def _zeroed_before(model: FileModel, loop: LoopInfo, backward) -> bool:
    """Some `zero_grad()` of the loop runs, ungated, before ``backward`` on every pass that
    reaches it (in its block or one around it): each step sees one micro-batch's gradients, so
    the `%` test skips updates rather than accumulating them."""
    for site in model.method_calls("zero_grad"):
        if (site.ctx.function is not loop.function or site.ctx.gated or site.order >= backward.order
                or model.enclosing_training_loop(site.ctx) is not loop):
            continue
        ctx = backward.ctx
        while ctx is not None and ctx is not site.ctx:
            ctx = ctx.outer
        if ctx is site.ctx:
            return True
    return False


def _string_key(expr: cst.BaseExpression):
    """`"gradient_accumulation_steps"` of `args["gradient_accumulation_steps"]`; None otherwise."""
    if type(expr) is not cst.Subscript or len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
        return None
    key = expr.slice[0].slice.value
    return key.evaluated_value if type(key) is cst.SimpleString and isinstance(key.evaluated_value, str) else None
