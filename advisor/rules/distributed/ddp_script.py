"""Helpers shared by the distributed rules."""

from __future__ import annotations
import re
from typing import Dict, List, Optional, Tuple
import libcst as cst
from advisor.model import CallSite, Context, FileModel, FunctionInfo, LoopInfo
from advisor.model.file_model import call_argument
from advisor.model.names import DATALOADER, dotted_name, last_segment
from advisor.model.subtree import iter_names


# Lightning calls `sampler.set_epoch` for the loaders it manages; Accelerate and Fabric do it for
# prepared loaders, and the HF Trainer for its own. Importing a helper from them is not enough.
LIGHTNING = ("lightning", "pytorch_lightning")


def framework_runs_epochs(model: FileModel) -> bool:
    if model.uses_framework(*LIGHTNING):
        return True
    if model.method_calls("prepare", "setup_dataloaders", "prepare_data_loader"):
        return True
    return any(
        q.startswith("accelerate.") or (q.startswith("transformers.") and q.endswith("Trainer"))
        for q in model.facts.calls_by_qualname
    )


DDP = "torch.nn.parallel.DistributedDataParallel"


INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


# Names whose value differs between ranks: `rank`, `local_rank`, `ddp_rank`, `dist.get_rank()`,
# `accelerator.process_index`.
RANK_WORD = re.compile(r"rank|process_index|proc_id", re.IGNORECASE)


ITER_WRAPPERS = frozenset({"enumerate", "tqdm", "trange", "iter", "zip", "islice", "cycle", "chain"})


def is_ddp_script(model: FileModel) -> bool:
    """The file builds a DDP model or starts a process group: it runs once per rank."""
    return bool(model.calls_to(DDP, INIT_PROCESS_GROUP))


def unwrap_iterable(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What a `for` really iterates: `loader` in `enumerate(tqdm(loader))`, both loaders of a `zip`."""
    out: List[cst.BaseExpression] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and last_segment(dotted_name(node.func)) in ITER_WRAPPERS:
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            if last_segment(dotted_name(node.func)) in ("zip", "chain"):
                stack.extend(positional)
            elif positional:
                stack.append(positional[0])
            continue
        out.append(node)
    return out


class LoaderResolver:
    """Which `DataLoader(...)` calls of the file an expression may hold. Follows assignments,
    tuple unpacking, helper returns, helper parameters (at their call sites), wrapper classes of
    the file (`Prefetcher(loader)`) and `iter(...)`: only the small subtrees those lead to."""

    def __init__(self, model: FileModel) -> None:
        self.model = model
        self.sites: Dict[int, CallSite] = {id(s.node): s for s in model.calls_to(DATALOADER)}

    def resolve(self, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> List[CallSite]:
        if depth > 6 or not self.sites:
            return []
        model = self.model
        out: List[CallSite] = []
        for node in unwrap_iterable(expr):
            if isinstance(node, cst.Call):
                site = self.sites.get(id(node))
                if site is not None:
                    out.append(site)
                    continue
                func = node.func
                if isinstance(func, cst.Name) and model.imports.qualify(func) is None:
                    if func.value in model.facts.functions:
                        out.extend(self._returned(model.facts.functions[func.value], None, depth))
                    elif func.value in model.facts.classes:
                        for arg in node.args:
                            out.extend(self.resolve(arg.value, ctx, order, depth + 1))
                continue
            if isinstance(node, cst.IfExp):
                out.extend(self.resolve(node.body, ctx, order, depth + 1))
                out.extend(self.resolve(node.orelse, ctx, order, depth + 1))
                continue
            name = dotted_name(node)
            if name is not None:
                out.extend(self._name(name, ctx, depth))
        return out

    def _name(self, name: str, ctx: Context, depth: int) -> List[CallSite]:
        model = self.model
        found = model.assignments(name, ctx)
        out: List[CallSite] = []
        for assignment in found:
            value = assignment.value
            if value is None:
                continue
            if assignment.index is not None:
                if isinstance(value, (cst.Tuple, cst.List)):
                    if assignment.index < len(value.elements):
                        out.extend(self.resolve(value.elements[assignment.index].value, assignment.ctx, assignment.order, depth + 1))
                elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                    info = model.facts.functions.get(value.func.value)
                    if info is not None:
                        out.extend(self._returned(info, assignment.index, depth))
                continue
            out.extend(self.resolve(value, assignment.ctx, assignment.order, depth + 1))
        info = ctx.function
        if not found and info is not None and name in info.params:
            position = info.params.index(name) - (1 if info.class_name is not None else 0)
            for site in model.call_sites(info):
                arg = call_argument(site.node, name, position)
                if arg is not None:
                    out.extend(self.resolve(arg.value, site.ctx, site.order, depth + 1))
        return out

    def _returned(self, info: FunctionInfo, index: Optional[int], depth: int) -> List[CallSite]:
        body_ctx = info.body_ctx
        out: List[CallSite] = []
        for value in info.returns:
            if index is not None:
                if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements):
                    continue
                value = value.elements[index].value
            out.extend(self.resolve(value, body_ctx, 1 << 30, depth + 1))
        return out

    def iterated_by(self, loop: LoopInfo) -> List[CallSite]:
        node = loop.node
        if not isinstance(node, cst.For):
            return []
        return self.resolve(node.iter, loop.ctx, 1 << 30)


def mentions(model: FileModel, expr: cst.BaseExpression, ctx: Context, pattern: "re.Pattern[str]", depth: int = 0) -> bool:
    """A name matching ``pattern`` appears in the expression, or in the values of the names it
    uses (two assignments deep): `seed + rank`, `seed_offset` bound to `ddp_rank`."""
    for name in iter_names(expr):
        if pattern.search(name):
            return True
        if depth < 2:
            for assignment in model.assignments(name, ctx):
                if assignment.value is not None and mentions(model, assignment.value, assignment.ctx, pattern, depth + 1):
                    return True
    return False


def kwargs_value(model: FileModel, site: CallSite, key: str) -> Tuple[str, Optional[cst.BaseExpression]]:
    """``key`` in the call's `**kwargs`: ("absent" | "present" | "unknown", value)."""
    state = "absent"
    for arg in site.node.args:
        if arg.star != "**":
            continue
        value: Optional[cst.BaseExpression] = arg.value
        if not isinstance(value, (cst.Dict, cst.Call)):
            name = dotted_name(arg.value)
            found = model.assignments(name, site.ctx) if name else []
            if len(found) != 1 or (site.ctx.scope, name) in model.facts.subscript_stores:
                return "unknown", None
            if any(s.receiver_name == name for s in model.method_calls("update", "setdefault")):
                return "unknown", None
            value = found[0].value
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if not isinstance(element, cst.DictElement):
                    return "unknown", None
                if isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key:
                    return "present", element.value
        elif isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
            for a in value.args:
                if a.keyword is None:
                    return "unknown", None
                if a.keyword.value == key:
                    return "present", a.value
        else:
            return "unknown", None
    return state, None
