"""GPU703 `graph-break-in-compiled-code`: `.item()`, `print`, `.tolist()` or a tensor-valued `if` inside compiled code."""

from __future__ import annotations
import re
from typing import Dict, Iterator, Optional
import libcst as cst
from advisor.findings import Severity
from advisor.model import FileModel
from advisor.model.facts import Context
from advisor.rules.base import Report, Rule, snippet
from advisor.rules.compilation.body_scan import BodyScan, scan_body
from advisor.rules.compilation.compile_facts import traced_functions, compile_facts


_BREAK_METHODS = ("item", "tolist", "numpy")


_BOOL_TORCH = re.compile(r"^(is_|get_|numel$|result_type$|can_cast$|promote_types$)")


def _numpy_rooted(model: FileModel, expr: Optional[cst.BaseExpression]) -> bool:
    while type(expr) in (cst.Call, cst.Attribute, cst.Subscript):
        if type(expr) is cst.Call:
            qual = model.imports.qualify(expr.func)
            if qual is not None:
                return qual.split(".")[0] == "numpy"
            expr = expr.func
        else:
            expr = expr.value
    return False


def _inner_break(expr: Optional[cst.BaseExpression]) -> bool:
    """The receiver chain already holds a breaking call: the chain is reported once, there."""
    while type(expr) in (cst.Call, cst.Attribute, cst.Subscript):
        if type(expr) is cst.Call:
            if type(expr.func) is cst.Attribute and expr.func.attr.value in _BREAK_METHODS:
                return True
            expr = expr.func
        else:
            expr = expr.value
    return False


class GraphBreakInCompiled(Rule):
    code = "GPU703"
    name = "graph-break-in-compiled-code"
    summary = "`.item()`, `print`, `.tolist()` or a tensor-valued `if` inside compiled code"
    what = """
        Inside a function decorated with `@torch.compile` (any spelling, aliases and
        `functools.partial` included), a function passed to `torch.compile(fn)`, the `forward`
        of a module class that the file compiles (`torch.compile(model)`, `model.compile()`,
        its submodules too), and the functions and methods these call: `.item()`, `.tolist()`,
        `print(...)`, `if`/`while` tests whose value depends on tensor data (`if x.sum() > 0:`),
        and, as information, `.numpy()`. Each break is reported at its own line. Breaks under a
        Python condition (`if self.debug:`) are information only.
    """
    why = """
        TorchDynamo can only put into a graph what it can trace without running it. Reading a
        tensor's value into Python, printing, or branching on tensor data forces it to stop:
        the graph is cut in two, the first part runs, the GPU is synchronised to get the value,
        and Python continues in eager mode until a new graph starts. Each break costs a sync,
        loses fusion across the cut, and can multiply the number of compiled graphs.
    """
    example = """
        @torch.compile
        def train_step(x, y):
            loss = criterion(model(x), y)
            if loss.isnan():
                raise RuntimeError("nan loss")
            print("loss", loss.item())
            return loss
    """
    instead = """
        @torch.compile
        def train_step(x, y):
            return criterion(model(x), y)

        loss = train_step(x, y)  # checks and logging outside the compiled function
        if step % 100 == 0:
            print("loss", loss.item())
    """
    hint = (
        "move logging and value checks out of the compiled function, "
        "or use `torch.where`/`torch.cond` for data-dependent choices"
    )
    fix_safety = """
        No automatic fix. Moving logging or a data-dependent branch out of compiled code changes
        the code's structure, and the replacement (`torch.where`, `torch.cond`, logging outside)
        depends on what the branch does.
    """
    references = (
        (
            "torch.compile troubleshooting (graph breaks)",
            "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
        ),
        ("torch.compile", "https://docs.pytorch.org/docs/stable/generated/torch.compile.html"),
    )
    requires = (("compile",),)

    def check(self, model: FileModel) -> Iterator[Report]:
        facts = compile_facts(model)
        traced = traced_functions(model, facts)
        if not traced:
            return
        for site in model.method_calls(*_BREAK_METHODS):
            function = site.ctx.function
            if function is None or function.key not in traced or site.node.args:
                continue
            if _numpy_rooted(model, site.receiver) or _inner_break(site.receiver):
                continue
            entry = traced[function.key]
            if site.method == "numpy":
                yield self.report(
                    site.node,
                    "`.numpy()` inside code compiled through `{compiled}`: unless Dynamo can trace the "
                    "NumPy code that follows, the graph breaks here",
                    severity=Severity.INFO,
                    data={"compiled": entry},
                )
                continue
            yield self.report(
                site.node,
                "`.{method}()` inside code compiled through `{compiled}` reads tensor data into "
                "Python: the graph breaks and the GPU is synchronised",
                severity=Severity.INFO if site.ctx.conditional else self.severity,
                data={"method": site.method, "compiled": entry},
            )
        for site in model.facts.calls_by_callee.get("print", ()):
            function = site.ctx.function
            if function is None or function.key not in traced:
                continue
            yield self.report(
                site.node,
                "`print(...)` inside code compiled through `{compiled}` cuts the graph in two",
                severity=Severity.INFO if site.ctx.conditional else self.severity,
                data={"compiled": traced[function.key]},
            )
        scans: Dict[str, BodyScan] = {}
        for condition in model.facts.conditions:
            function = condition.ctx.function
            if condition.kind == "assert" or function is None or function.key not in traced:
                continue
            scan = scans.get(function.key)
            if scan is None:
                scan = scans[function.key] = scan_body(model, function)
            if not self._data_dependent(model, scan, condition.test, condition.ctx):
                continue
            yield self.report(
                condition.test,
                "`{statement}` on tensor data (`{expression}`) inside code compiled "
                "through `{compiled}`: the graph breaks to evaluate it",
                severity=Severity.INFO if condition.ctx.conditional else self.severity,
                data={"statement": condition.kind, "expression": snippet(model, condition.test),
                      "compiled": traced[function.key]},
            )

    def _data_dependent(self, model: FileModel, scan: BodyScan, test: cst.BaseExpression, ctx: Context) -> bool:
        if type(test) is cst.BooleanOperation:
            return self._data_dependent(model, scan, test.left, ctx) or self._data_dependent(model, scan, test.right, ctx)
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self._data_dependent(model, scan, test.expression, ctx)
        if type(test) is cst.Comparison:
            if any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in test.comparisons):
                return False
            parts = [test.left, *(c.comparator for c in test.comparisons)]
            return any(self._tensor_value(model, scan, p, ctx) for p in parts)
        return self._tensor_value(model, scan, test, ctx)

    @staticmethod
    def _tensor_value(model: FileModel, scan: BodyScan, expr: cst.BaseExpression, ctx: Context) -> bool:
        if type(expr) is cst.Call:
            qual = model.imports.qualify(expr.func)
            if qual is not None and _BOOL_TORCH.match(qual.rsplit(".", 1)[-1]):
                return False  # torch.is_tensor(x), torch.is_grad_enabled()
        return scan.tensorish(expr, strict=True) or model.is_tensor(expr, ctx)
