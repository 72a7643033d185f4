"""GPU402 `graph-kept-across-iterations`: a loss or model output accumulated across training steps without `.detach()`."""

from __future__ import annotations
from typing import Iterator, List, Optional, Set
import libcst as cst
from advisor.findings import Fixable
from advisor.model import Context, FileModel
from advisor.model.facts import Assignment
from advisor.model.file_model import literal_bool
from advisor.model.names import dotted_name
from advisor.model.walk import children
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule, snippet
from advisor.model.graphs import carries_graph
from advisor.rules.memory.walks import TRAINING_TEXT



def _receiver_target(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """`history` for `history["loss"]`, `self.losses` for `self.losses`: what a method call mutates."""
    while type(expr) is cst.Subscript:
        expr = expr.value
    return dotted_name(expr) if expr is not None else None


def _referenced_names(node: cst.CSTNode) -> Set[str]:
    """Dotted names read in a small subtree: `self.losses` and `self` for `self.losses[0]`, but
    not the attribute part `losses` on its own."""
    names: Set[str] = set()
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) in (cst.Name, cst.Attribute):
            dotted = dotted_name(current)
            if dotted is not None:
                names.add(dotted)
            if type(current) is cst.Attribute:
                stack.append(current.value)
            continue
        stack.extend(children(current))
    return names


class GraphRetainedAcrossIterations(Rule):
    code = "GPU402"
    name = "graph-kept-across-iterations"
    summary = "a loss or model output accumulated across training steps without `.detach()`"
    what = """
        In the training loop, a tensor that still belongs to the autograd graph (a loss, a
        model output, or arithmetic on them) is added to a running total (`total += loss`,
        `total = total + loss`) or appended to a list (`history.append(loss)`,
        `outputs.append(model(x))`) that lives across iterations. Values already turned into
        numbers (`.item()`, `float()`) or detached, code under `torch.no_grad()` (also the
        result of a helper that computes it there, `accuracy(out, y)`, and of a reduce helper
        handed such a value: `reduce_mean(acc, n)`, which returns a copy of its argument,
        answers for what this call passes), scripts that
        differentiate through graphs on purpose (`create_graph=True`, `retain_graph=True`),
        and lists rebuilt every iteration or backpropagated through are left alone. An iteration
        is one optimizer step: micro-batches collected in a list the step rebuilds (the inner
        loop runs backward, the outer one steps) are one step's worth.
    """
    why = """
        A tensor with a graph keeps every intermediate activation it was computed from alive,
        because backward might still need them. Accumulating it holds on to every iteration's
        graph: memory grows step after step until the run fails with out-of-memory, often
        hours in. The running total only needs the value: `.detach()` keeps it on the GPU
        without the graph and without a sync (unlike `.item()`).
    """
    example = """
        total_loss = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss
    """
    instead = """
        total_loss = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss.detach()
    """
    hint = "accumulate `loss.detach()`: the value stays on the GPU and the graph is freed"
    fixable = Fixable.SAFE
    fix_safety = """
        The fix appends `.detach()` to the accumulated value (or wraps an expression in
        `(...).detach()`). The running total or list keeps the same numbers, on the same device,
        without the graph. It assumes nothing differentiates through the accumulated value later:
        the rule stays silent for lists and totals that the file passes to `backward()`, and for
        scripts that keep graphs on purpose (`create_graph=True`, `retain_graph=True`), but code
        in another module that backpropagates through the returned total would break.
    """
    references = (
        (
            "Frequently asked questions: don't accumulate history across your training loop",
            "https://docs.pytorch.org/docs/stable/notes/faq.html",
        ),
        ("torch.Tensor.detach", "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
        ("Autograd mechanics", "https://docs.pytorch.org/docs/stable/notes/autograd.html"),
    )
    requires = (("+", "append"), TRAINING_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        if self._keeps_graphs_on_purpose(model):
            return
        backpropagated = self._backpropagated_names(model)
        for found in model.facts.assignments.values():
            for assignment in found:
                report = self._check_assignment(model, assignment, backpropagated)
                if report is not None:
                    yield report
        for site in model.method_calls("append"):
            if len(site.node.args) != 1 or site.node.args[0].keyword is not None or site.node.args[0].star:
                continue
            heat = model.heat(site.ctx)
            target = _receiver_target(site.receiver)
            if heat is None or target is None or target in backpropagated:
                continue
            value = site.node.args[0].value
            leaves = self._graph_leaves(model, value, site.ctx, site.order)
            if not leaves or not self._outlives_iteration(model, target, site.ctx):
                continue
            yield self.report(
                site.node,
                "`{expression}` keeps every step's autograd graph alive",
                severity=self.severity_for(heat),
                fix=self._fix(model, leaves),
                data={"expression": snippet(model, site.node)},
            )

    def _check_assignment(self, model: FileModel, assignment: Assignment, backpropagated: Set[str]) -> Optional[Report]:
        statement, value, target = assignment.statement, assignment.value, assignment.target
        if value is None or statement is None or target in backpropagated:
            return None
        if assignment.augmented:
            if not type(statement) is cst.AugAssign or not type(statement.operator) is cst.AddAssign:
                return None
            added = value
        else:
            added = self._self_sum_operand(value, target)
            if added is None:
                return None
        heat = model.heat(assignment.ctx)
        if heat is None:
            return None
        leaves = self._graph_leaves(model, added, assignment.ctx, assignment.order)
        if not leaves or not self._outlives_iteration(model, target, assignment.ctx):
            return None
        return self.report(
            statement,
            "`{target}` sums tensors that carry autograd graphs, keeping every step's graph alive",
            severity=self.severity_for(heat),
            fix=self._fix(model, leaves),
            data={"target": target},
        )

    @staticmethod
    def _self_sum_operand(value: cst.BaseExpression, target: str) -> Optional[cst.BaseExpression]:
        """`loss` in `total = total + loss` (or `loss + total`)."""
        if not type(value) is cst.BinaryOperation or not type(value.operator) is cst.Add:
            return None
        if dotted_name(value.left) == target:
            return value.right
        if dotted_name(value.right) == target:
            return value.left
        return None

    def _keeps_graphs_on_purpose(self, model: FileModel) -> bool:
        for site in model.facts.calls:
            for arg in site.node.args:
                if arg.keyword is not None and arg.keyword.value in ("create_graph", "retain_graph"):
                    if literal_bool(arg.value) is not False:
                        return True
        return False

    def _backpropagated_names(self, model: FileModel) -> Set[str]:
        """Names a backward runs through (`torch.stack(losses).mean().backward()`): their graphs
        are wanted. Follows one assignment (`total = sum(parts); total.backward()`)."""
        names: Set[str] = set()
        sites = model.method_calls("backward") + model.calls_to("torch.autograd.backward")
        for site in sites:
            roots = [a.value for a in site.node.args]
            if site.receiver is not None and site.qualname is None:
                roots.append(site.receiver)
            for root in roots:
                for name in _referenced_names(root):
                    if name in names:
                        continue
                    names.add(name)
                    for assignment in model.assignments(name, site.ctx):
                        if assignment.value is not None:
                            names.update(_referenced_names(assignment.value))
        return names

    def _outlives_iteration(self, model: FileModel, target: str, ctx: Context) -> bool:
        """The container or total is bound outside the training loop (or kept on an object),
        and not rebound on every iteration."""
        loop = model.enclosing_training_loop(ctx)
        if loop is not None and not loop.has_step:
            # Micro-batches of one step (`for chunk in chunks: ...; loss.backward()`, then
            # `optimizer.step()` after the loop): a step is one pass of the loop that steps.
            stepping = loop.parent
            while stepping is not None and not stepping.own_step:
                stepping = stepping.parent
            loop = stepping or loop
        current = ctx.loop
        while current is not None:
            if target in current.targets:
                return False  # the `for` statement rebinds it on every iteration
            if current is loop:
                break
            current = current.parent
        bindings = [
            a for a in model.assignments(target, ctx) if not a.augmented and self._self_sum_operand_of(a) is None
        ]
        if loop is not None:
            inside = [a for a in bindings if a.ctx.function is ctx.function and (a.ctx.loop is not None and a.ctx.loop.within(loop))]
        else:
            inside = [a for a in bindings if a.ctx.function is ctx.function and ctx.function is not None]
        if any(not a.ctx.gated or not model.guards.gated(a.ctx) for a in inside):
            # Rebuilt every iteration, or on every optimizer step (`running_loss = 0` in the
            # `if (i + 1) % accum == 0:` branch that steps): one step's worth at most.
            return False
        if target.startswith("self."):
            # Unless the object itself is made on every step (`states = StatesAndBeliefs()` in
            # `forward`, filled by its `append` method, then stacked): its lists die with it.
            owner = ctx.function.class_name if ctx.function is not None else None
            return owner is None or not model.rebuilt_every_step(owner)
        if any(a not in inside for a in bindings):
            return True
        return ctx.function is not None and target in ctx.function.params and loop is not None

    def _self_sum_operand_of(self, assignment: Assignment) -> Optional[cst.BaseExpression]:
        return None if assignment.value is None else self._self_sum_operand(assignment.value, assignment.target)

    # -- does a value carry an autograd graph? ------------------------------------------------
    def _graph_leaves(
        self, model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int
    ) -> List[cst.BaseExpression]:
        """The operands of ``expr`` that carry a graph: where `.detach()` goes."""
        if type(expr) is cst.BinaryOperation:
            return self._graph_leaves(model, expr.left, ctx, order) + self._graph_leaves(model, expr.right, ctx, order)
        if type(expr) is cst.UnaryOperation and not type(expr.operator) is cst.Not:
            return self._graph_leaves(model, expr.expression, ctx, order)
        return [expr] if carries_graph(model, expr, ctx, order) else []

    def _fix(self, model: FileModel, leaves: List[cst.BaseExpression]) -> FixSpec:
        edits = []
        for leaf in leaves:
            if type(leaf) in (cst.Name, cst.Attribute, cst.Call, cst.Subscript):
                edits.append(NodeEdit(leaf, ".detach()", "after"))
            else:
                edits.append(NodeEdit(leaf, f"({model.code(leaf).strip()}).detach()"))
        return FixSpec("accumulate the detached value", tuple(edits))
