"""GPU401 `gradients-zeroed-not-freed`: `zero_grad(set_to_none=False)` or a manual `p.grad.zero_()` loop."""

from __future__ import annotations
from typing import Iterator, List, Optional
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import Context, FileModel, LoopInfo
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import dotted_name
from advisor.model.guards import guards_of
from advisor.model.literals import literal_values
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule, snippet
from advisor.rules.memory.walks import walk


_GRAD_ACCUMULATING_METHODS = frozenset({"add_", "copy_", "addcmul_", "addcdiv_", "sub_"})


_CUDA_GRAPH_NAMES = ("torch.cuda.graph", "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables")


def _grad_path(name: Optional[str]) -> Optional[str]:
    """`p` for `p.grad` and `p.grad.data`; None for anything else."""
    if name is None:
        return None
    parts = name.split(".")
    if len(parts) >= 2 and parts[-1] == "data":
        parts = parts[:-1]
    if len(parts) == 2 and parts[1] == "grad":
        return parts[0]
    return None


def _iterates_parameters(model: FileModel, loop: LoopInfo) -> bool:
    """`for p in model.parameters()`, `named_parameters()`, `group["params"]`, or a name bound to one."""
    node = loop.node
    if not type(node) is cst.For:
        return False
    sources: List[cst.CSTNode] = [node.iter]
    name = dotted_name(node.iter)
    if name is not None:
        found = model.assignments(name, loop.ctx)
        sources.extend(a.value for a in found if a.value is not None)
        function = loop.function
        if not found and function is not None and name in function.params and "param" in name.lower():
            return True  # `def zero_grad(model_params): for param in model_params: ...`
    for source in sources:
        for current in walk(source):
            if type(current) is cst.Attribute and current.attr.value in ("parameters", "named_parameters"):
                return True
            if type(current) is cst.SimpleString and current.evaluated_value == "params":
                return True
    return False


class GradientsZeroedNotFreed(Rule):
    code = "GPU401"
    name = "gradients-zeroed-not-freed"
    summary = "`zero_grad(set_to_none=False)` or a manual `p.grad.zero_()` loop"
    what = """
        `optimizer.zero_grad(set_to_none=False)` and `model.zero_grad(set_to_none=False)` with
        a literal False or a value that is False on every shipped run (a `store_true` option no
        launch command passes: `set_to_none=args.free_grads`; no fix is offered for it,
        as the option is the author's switch), and loops over `model.parameters()` that zero every gradient by hand
        (`p.grad.zero_()`, `p.grad.data.zero_()`, `p.grad = torch.zeros_like(p)`), also in a
        helper that loops over a parameter list it is handed (`def zero_grad(model_params):`),
        in a module that trains nothing itself when the helper runs on every step of a training
        loop elsewhere (a mixed-precision trainer's `zero_grad`). A plain
        `zero_grad()` is reported only when the configured minimum torch is older than 2.0,
        where it still zeroed in place. A call in a training function outside its batch loops
        (before the loop, or once per epoch around it) is informational. Scripts that add into `.grad` themselves
        (`p.grad += ...`, `p.grad.add_(...)`) or capture CUDA graphs are left alone: they
        need the gradient tensors to stay allocated; so is a zero gradient made only for a
        parameter that has none (`if p.grad is None: p.grad = torch.zeros_like(p)`).
    """
    why = """
        Zeroing launches a memset kernel for every parameter, and the next backward then has to
        read the zeros and add to them instead of writing the new gradient directly. Setting
        gradients to None skips both, and frees their memory between the step and the next
        backward. This has been the default since torch 2.0.
    """
    example = """
        for x, y in loader:
            optimizer.zero_grad(set_to_none=False)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    instead = """
        for x, y in loader:
            optimizer.zero_grad(set_to_none=True)  # the default since torch 2.0
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    hint = "use `zero_grad(set_to_none=True)` (the default since torch 2.0), or set `p.grad = None`"
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix turns `zero_grad(set_to_none=False)` into `set_to_none=True` (and, below
        torch-version 2.0, a plain `zero_grad()` into `zero_grad(set_to_none=True)`). Always
        offered as unsafe: `torch.optim` optimizers skip a parameter whose gradient is None but
        step one whose gradient is zero. With momentum, Adam's moment estimates or weight decay,
        a parameter that gets no gradient on some steps (a branch used only on alternate steps,
        a frozen head) then trains differently, and the final weights change. Code that reads
        `.grad` after zeroing also sees None instead of zeros.

        Not offered for the hand-written zeroing loops (`p.grad.zero_()`), where the loop has to
        go, nor below torch-version 1.7, which has no `set_to_none`.
    """
    references = (
        (
            "torch.optim.Optimizer.zero_grad (None and zero gradients step differently)",
            "https://docs.pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
        ),
        (
            "Performance Tuning Guide: use parameter.grad = None",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#use-parameter-grad-none-instead-of-model-zero-grad-or-optimizer-zero-grad",
        ),
        (
            "pytorch/pytorch#92731: `set_to_none=True` becomes the default",
            "https://github.com/pytorch/pytorch/pull/92731",
        ),
    )
    requires = (("zero_grad", ".grad"),)

    def check(self, model: FileModel) -> Iterator[Report]:
        if model.calls_to(*_CUDA_GRAPH_NAMES) or self._adds_into_grad(model):
            return
        for site in model.method_calls("zero_grad"):
            call = site.node
            if star_kwargs(call) or any(a.star == "*" for a in call.args):
                continue
            arg = call_argument(call, "set_to_none", 0)
            edit: Optional[NodeEdit]
            if arg is not None:
                if literal_bool(arg.value) is False:
                    edit = NodeEdit(arg.value, "True")
                    message = "`zero_grad(set_to_none=False)` writes zeros into every gradient instead of freeing it"
                elif literal_values(model, arg.value, site.ctx, site.order).only(False):
                    # `set_to_none=args.free_grads`, a flag off by default that no
                    # shipped command turns on: the runs zero in place. The flag is the
                    # author's switch, so no edit is offered in its place.
                    edit = None
                    message = (f"`set_to_none={snippet(model, arg.value, 40)}` is False on the shipped runs: "
                               "`zero_grad` writes zeros into every gradient instead of freeing it")
                else:
                    continue
            elif not call.args and model.torch_version < (2, 0):
                edit = NodeEdit(call, f"{model.code(call.func)}(set_to_none=True)")
                message = "before torch 2.0, `zero_grad()` writes zeros into every gradient instead of freeing it"
            else:
                continue
            fix = None
            if edit is not None and model.torch_version >= (1, 7):  # `set_to_none` exists since 1.7
                # Unsafe wherever it is offered: optimizers skip a parameter whose gradient is
                # None but step one whose gradient is zero (momentum, Adam's moments, weight
                # decay), so a parameter left without a gradient on some steps trains differently.
                fix = FixSpec("pass `set_to_none=True`", (edit,), Applicability.UNSAFE)
            # Before the batch loop or once per epoch, the zeroing costs nothing worth a warning.
            severity = Severity.INFO if model.beside_step_loops(site.ctx) else self.severity
            yield self.report(call, message, fix=fix, severity=severity)
        trains = model.trains_anywhere
        for site in model.method_calls("zero_", "fill_"):
            param = _grad_path(site.receiver_name)
            if param is None or (site.method == "fill_" and not self._zero_literal(site.node)):
                continue
            if not trains and not self._per_step_helper(model, site.ctx):
                continue
            if self._in_parameter_loop(model, site.ctx, param):
                yield self.report(site.node, "`{expression}` zeroes gradients one parameter at a time",
                                  data={"expression": snippet(model, site.node)}, severity=_host_only(model))
        for (_, target), found in model.facts.assignments.items():
            param = _grad_path(target)
            if param is None:
                continue
            for assignment in found:
                value = assignment.value
                if not trains and not self._per_step_helper(model, assignment.ctx):
                    continue
                if assignment.augmented or not type(value) is cst.Call or assignment.statement is None:
                    continue
                if model.imports.qualify(value.func) not in ("torch.zeros_like", "torch.zeros"):
                    continue
                if _fills_missing(assignment.ctx, target):
                    continue  # `if p.grad is None: p.grad = torch.zeros(...)`: only where none exists
                if self._in_parameter_loop(model, assignment.ctx, param):
                    yield self.report(
                        assignment.statement, "`{target} = {value}` allocates zeroed gradients",
                        data={"target": target, "value": snippet(model, value, 30)}, severity=_host_only(model),
                    )

    @staticmethod
    def _per_step_helper(model: FileModel, ctx: Context) -> bool:
        """In a module that trains nothing itself: the zeroing loop's function runs on every
        step of a training loop elsewhere (a mixed-precision trainer's `zero_grad(params)`)."""
        loop = ctx.loop
        return loop is not None and loop.function is not None and model.batch_heat(loop.ctx) is not None

    def _zero_literal(self, call: cst.Call) -> bool:
        return len(call.args) == 1 and type(call.args[0].value) in (cst.Integer, cst.Float) and (
            float(call.args[0].value.value) == 0.0
        )

    def _in_parameter_loop(self, model: FileModel, ctx: Context, param: str) -> bool:
        loop = ctx.loop
        return loop is not None and param in loop.targets and _iterates_parameters(model, loop)

    def _adds_into_grad(self, model: FileModel) -> bool:
        """The script accumulates into `.grad` itself: it needs the tensors to exist."""
        for (_, target), found in model.facts.assignments.items():
            if _grad_path(target) is not None and any(a.augmented for a in found):
                return True
        for method in _GRAD_ACCUMULATING_METHODS:
            for site in model.facts.calls_by_method.get(method, ()):
                if _grad_path(site.receiver_name) is not None:
                    return True
        return False


def _host_only(model: FileModel) -> Optional[Severity]:
    """Information in a script with no sign of a GPU (`model.may_use_gpu`): one small kernel per
    parameter is what the zeroing costs on a device; on the host it is a loop of memsets."""
    return None if model.may_use_gpu else Severity.INFO


def _fills_missing(ctx, target: str) -> bool:
    """A guard around the store holds only when the gradient is missing (`if p.grad is None:`)."""
    for guard in guards_of(ctx):
        test = guard.test
        if (guard.positive and not guard.exits and type(test) is cst.Comparison and len(test.comparisons) == 1
                and type(test.comparisons[0].operator) is cst.Is and dotted_name(test.left) == target
                and type(test.comparisons[0].comparator) is cst.Name and test.comparisons[0].comparator.value == "None"):
            return True
    return False
