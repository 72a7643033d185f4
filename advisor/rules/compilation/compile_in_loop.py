"""GPU702 `compile-in-loop`: `torch.compile(...)` called inside a loop or a per-step function."""

from __future__ import annotations
from typing import Iterator, List, Optional
import libcst as cst
from advisor.model import CallSite, FileModel
from advisor.model.facts import Context, FunctionInfo, LoopInfo
from advisor.model.file_model import call_argument
from advisor.model.names import dotted_name, root_name
from advisor.rules.base import Report, Rule, snippet
from advisor.rules.compilation.compile_facts import COMPILE, SAME_OBJECT_METHODS, first_argument, compile_facts, enclosing_tests


def _one_shot(test: cst.BaseExpression) -> bool:
    """`if compiled is None`, `if epoch == 0`, `if not hasattr(self, "fast")`: a guard that lets
    the compile run once. A periodic `% N` test is not one."""
    stack = [test]
    found = False
    while stack:
        node = stack.pop()
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo:
            return False
        if type(node) is cst.Comparison:
            if any(type(c.operator) in (cst.Equal, cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in node.comparisons):
                found = True
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)
        elif type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
            found = True
            stack.append(node.expression)
        elif type(node) is cst.BooleanOperation:
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
    if type(expr) is cst.Call:
        qual = model.imports.qualify(expr.func)
        if qual in COMPILE:
            inner = first_argument(expr, "model")
            return inner is not None and _built_anew(model, inner, ctx, order, loop)
        if type(expr.func) is cst.Attribute and expr.func.attr.value in SAME_OBJECT_METHODS:
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
        if value is not None and type(value) is cst.Call and model.imports.qualify(value.func) in COMPILE:
            continue  # `model = torch.compile(model)`: the same object again
        if loop is None or (assignment.ctx.loop is not None and assignment.ctx.loop.within(loop)):
            return True
    return False


def _element_of_the_loop(loop, target: cst.BaseExpression) -> bool:
    """The compiled object is the loop's own item (`for m in models: torch.compile(m)`) or the
    element its index names (`models[i]` under `for i in range(len(models))`): a different
    object on each iteration, each compiled once."""
    node = loop.node
    if type(node) is not cst.For:
        return False
    names = {n.value for n in _target_names(node.target)}
    if type(target) is cst.Name:
        return target.value in names
    while type(target) is cst.Attribute and type(target.value) is not cst.Name:
        target = target.value  # `averagers.avgs_dict[k].av_model`: a part of the item the index names
    if type(target) is cst.Subscript and len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index:
        index = target.slice[0].slice.value
        return type(index) is cst.Name and index.value in names
    return False


def _target_names(target: cst.BaseExpression):
    if type(target) is cst.Name:
        yield target
    elif type(target) in (cst.Tuple, cst.List):
        for element in target.elements:
            yield from _target_names(element.value)


class CompileInLoop(Rule):
    code = "GPU702"
    name = "compile-in-loop"
    summary = "`torch.compile(...)` called inside a loop or a per-step function"
    what = """
        A `torch.compile(...)` call inside a loop, inside a function that runs on every training
        step, or inside a function that a loop calls, when each run compiles the same object
        again. Compiling once before the loop, at module level, with a `@torch.compile`
        decorator, a fresh model per iteration (a sweep over configurations), or each element of a list of
        models in turn (`for i in range(len(models)): models[i] = torch.compile(models[i])`, also a
        part of each, `for k in avgs: avgs[k].model = torch.compile(avgs[k].model)`) is not
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
    fix_safety = """
        No automatic fix. Hoisting the compile out of the loop means deciding where the compiled
        model lives and making every call site use it.
    """
    references = (
        ("torch.compile", "https://docs.pytorch.org/docs/stable/generated/torch.compile.html"),
        (
            "torch.compile troubleshooting (recompilations)",
            "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
        ),
    )
    requires = (("compile",),)

    def check(self, model: FileModel) -> Iterator[Report]:
        facts = compile_facts(model)
        for site in model.calls_to(*COMPILE):
            if id(site.node) in facts.decorator_calls:
                continue
            target = first_argument(site.node, "model")
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
            if heat is None and _element_of_the_loop(loop, target):
                return None  # `for i in range(len(models)): models[i] = torch.compile(models[i])`
            message = (
                "`{call}` runs on every iteration of the loop on line {line[loop]}: "
                "each call wraps the model again and may recompile it"
            )
            severity = self.severity_for(heat) if heat else self.severity
            return self.report(site.node, message, severity=severity, data={"call": code},
                               related=[(loop.node, "loop")])
        function = ctx.function
        if function is None:
            return None
        if ctx.conditional and self._guarded(function.node, site):
            return None
        if heat is not None:
            message = (
                "`{call}` runs on every training step (in `{function}`): "
                "each call wraps the model again and may recompile it"
            )
            return self.report(site.node, message, severity=self.severity_for(heat),
                               data={"call": code, "function": function.node.name.value})
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
                "`{call}` runs each time the loop on line {line[loop]} calls `{function}`: "
                "each call wraps the same model again and may recompile it"
            )
            return self.report(site.node, message, data={"call": code, "function": function.node.name.value},
                               related=[(caller_loop.node, "loop")])
        return None

    @staticmethod
    def _passed_value(function: FunctionInfo, target: cst.BaseExpression, caller: CallSite):
        """The caller's argument for a parameter the function compiles; None when the compiled
        object is not a parameter; False when it cannot be told."""
        if not type(target) is cst.Name or target.value not in function.params:
            return None
        position = function.params.index(target.value)
        if function.class_name is not None:
            position -= 1
        arg = call_argument(caller.node, target.value, position)
        return False if arg is None else arg.value
