"""What kind of object a value is: a DataLoader, a DistributedSampler, a DDP wrapper, a
GradScaler, a `TensorDataset` (samples already in memory), an optimizer (and whether it is an adaptive one, such as Adam), a torch.nn module;
and whether it is one on every path.

An answer maps each kind to whether every path holds it (a kind some path lacks, or reached
through a path nobody can see, is uncertain).
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import libcst as cst

from advisor.model.calls import class_kinds
from advisor.model.facts import Context
from advisor.model.names import (
    BATCH_SAMPLER, DATALOADER, DDP_WRAPPERS, DISTRIBUTED_SAMPLER, GRAD_SCALER, LIBRARY_LOSS_SCALERS, dotted_name,
)
from advisor.model.value_flow import Question, ValueFlow, argument
from advisor.model.vocabulary import ADAPTIVE_OPTIMIZERS, SAME_OBJECT_METHODS

KindMap = Dict[str, bool]


def _unwraps(expr: cst.IfExp) -> bool:
    """`model.module if ddp else model`: the usual way to unwrap, never a wrapped model."""
    return any(type(b) is cst.Attribute and b.attr.value == "module" for b in (expr.body, expr.orelse))


# Hugging Face libraries whose `Class.from_pretrained(...)` builds a module (a model, a pipeline
# of models), unless the class is one of the helpers they load the same way.
_PRETRAINED_LIBRARIES = frozenset({"transformers", "diffusers", "peft"})
_PRETRAINED_HELPERS = ("Tokenizer", "Processor", "FeatureExtractor", "Config", "Scheduler")


def _pretrained_module(qual: str) -> bool:
    """`diffusers.StableDiffusionPipeline.from_pretrained`, `transformers.AutoModel.from_pretrained`."""
    parts = qual.split(".")
    if len(parts) < 3 or parts[0] not in _PRETRAINED_LIBRARIES:
        return False
    owner = parts[-2]
    return owner[:1].isupper() and not any(helper in owner for helper in _PRETRAINED_HELPERS)


class Kinds(Question[KindMap]):
    key = "kinds"
    unknown: KindMap = {}
    # A binding no run reaches gives no kind: `model = DDP(model)` under `if self.world_size > 1:`
    # where the world is always one process.
    skips_dead = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[KindMap]:
        if type(expr) is cst.IfExp:
            return {} if _unwraps(expr) else None
        if not type(expr) is cst.Call:
            return None
        model = flow.model
        qual = model.imports.qualify(expr.func)
        symbol = model.symbol(qual) if qual is not None else None
        if symbol is not None and symbol.kind == "class":
            return {kind: True for kind in class_kinds(symbol.model, symbol.info)}
        if qual is not None:
            return self._constructed(flow, expr, qual, ctx, order)
        func = expr.func
        if type(func) is cst.Name and func.value in model.facts.classes and not model.bindings.function(
            func.value, ctx, order
        ):
            return {kind: True for kind in class_kinds(model, model.facts.classes[func.value])}
        if type(func) is cst.Attribute:
            if func.attr.value in SAME_OBJECT_METHODS:
                return flow.ask(self, func.value, ctx, order)
            return {}
        return None  # a function of this file: what it returns

    def _constructed(self, flow: ValueFlow, call: cst.Call, qual: str, ctx: Context, order: int) -> KindMap:
        if qual == DATALOADER:
            kinds = {"dataloader": True}
            sampler = argument(call, "sampler", 3)
            if sampler is not None and "dist_sampler" in flow.ask(self, sampler.value, ctx, order):
                kinds["dist_loader"] = True
            return kinds
        if qual == DISTRIBUTED_SAMPLER:
            return {"dist_sampler": True}
        if qual.startswith("torch.utils.data.") and qual.endswith(".TensorDataset"):
            return {"tensor_dataset": True}
        if qual in DDP_WRAPPERS:
            return {"ddp": True}
        if qual == GRAD_SCALER or qual in LIBRARY_LOSS_SCALERS:
            return {"scaler": True}
        last = qual.rsplit(".", 1)[-1]
        if qual.startswith("torch.optim.") and "lr_scheduler" not in qual and last[:1].isupper():
            if last in ADAPTIVE_OPTIMIZERS:
                return {"optimizer": True, "adaptive_optimizer": True}
            return {"optimizer": True}
        if qual.startswith("torch.nn.") and last[:1].isupper():
            return {"module": True}
        if last == "from_pretrained":
            # A project class's own `from_pretrained` (`MarigoldPipeline.from_pretrained(...)`,
            # inherited from its diffusers base): an instance of that class.
            symbol = flow.model.symbol(qual[: -len(".from_pretrained")])
            if symbol is not None and symbol.kind == "class":
                return {kind: True for kind in class_kinds(symbol.model, symbol.info)}
        if last == "from_pretrained" and _pretrained_module(qual):
            owner = qual.rsplit(".", 2)[-2]
            return {"module": True, "pipeline": True} if "Pipeline" in owner else {"module": True}
        return {}

    def refine(self, flow: ValueFlow, expr, ctx: Context, order: int, answer: KindMap) -> KindMap:
        """A wrapper tested on the read's path: `isinstance(model, DDP)`, `hasattr(model, "module")`."""
        wrapped = wrapped_on_path(flow, dotted_name(expr), ctx, order)
        if wrapped is None and "ddp" in answer and unwrapped_by_callers(flow, dotted_name(expr), ctx, order):
            wrapped = False
        if wrapped is None or (wrapped and answer.get("ddp")):
            return answer
        if wrapped == _HAS_MODULE and "ddp" not in answer:
            return answer  # some object with a `.module`: not known to be a wrapper
        if not wrapped and "ddp" not in answer:
            return answer
        out = dict(answer)
        if wrapped:
            out["ddp"] = True
        else:
            del out["ddp"]
        return out

    def combine(self, answers: Sequence[KindMap]) -> KindMap:
        out: KindMap = {}
        for answer in answers:
            for kind in answer:
                out[kind] = True
        for kind in out:
            out[kind] = all(answer.get(kind, False) for answer in answers)
        return out


KINDS = Kinds()


# `hasattr(model, "module")` holds: the value has a `.module`, whatever it is.
_HAS_MODULE = "module"


def wrapped_on_path(flow: ValueFlow, name: Optional[str], ctx: Context, order: float):
    """Whether the `if` tests around a read say that ``name`` is wrapped in DDP/DataParallel
    there (True: `isinstance(model, DDP)`), that it has a `.module` (`_HAS_MODULE`), that it is
    not wrapped (False), or say nothing (None). A test counts only while no binding of the name
    made after it can reach the read."""
    if name is None:
        return None
    for condition in flow.bindings.paths.of(ctx):
        guard = condition.guard
        found = _narrows(flow.model, guard.test, name, guard.positive, guard.ctx, guard.order, 0)
        if found is None:
            continue
        later = [a for a in flow.model.bindings.reaching(name, ctx, order).assignments
                 if guard.order < a.order < order and a.ctx.function is ctx.function]
        if not later:
            return found
    if _unwrapped_by_test(flow.model, name, ctx, order):
        return False
    return None


def _unwrapped_by_test(model, name: str, ctx: Context, order: float) -> bool:
    """`if is_multi_gpu(model): model = model.module` before the read, with no `else`: the
    wrapped value is replaced where the test holds, and the bindings from before the test reach
    the read only where it fails, where the value is no wrapper either."""
    reach = model.bindings.reaching(name, ctx, order)
    unwraps = [a for a in reach.assignments
               if a.value is not None and a.index is None and dotted_name(a.value) == name + ".module"]
    if not unwraps or not reach.closed:
        return False
    tests = []
    for binding in unwraps:
        guard = binding.ctx.guard
        if guard is None or not guard.positive or guard.exits or binding.ctx.function is not ctx.function:
            return False
        if _narrows(model, guard.test, name, True, guard.ctx, guard.order, 0) is not True:
            return False
        tests.append(guard.order)
    first = min(tests)
    return all(a.order < first for a in reach.assignments if all(a is not u for u in unwraps))


def unwrapped_by_callers(flow: ValueFlow, name: Optional[str], ctx: Context, order: float) -> bool:
    """A parameter read where the function's own test says the run is not distributed, while
    every caller wraps what it passes only under that same test: `if args.distributed:
    generator = DDP(generator)`, then `train(args, generator)`, whose `else` of
    `if args.distributed:` holds the plain model (`g_module = generator`)."""
    function = ctx.function
    if name is None or function is None or name not in function.params:
        return False
    reach = flow.bindings.reaching(name, ctx, order)
    if reach.assignments or reach.parameter is not function:
        return False
    false_keys = [c for c in flow.bindings.paths.of(ctx) if c.key is not None and not c.holds]
    position = function.params.index(name) - function.receiver_params
    callers = flow.model.callers(function) if false_keys else []
    if not callers:
        return False
    for model, site in callers:
        passed = argument(site.node, name, position)
        held = dotted_name(passed.value) if passed is not None else None
        if held is None or not _wraps_only_under(model, held, site, function, false_keys):
            return False
    return True


def _wraps_only_under(model, held: str, site, function, false_keys) -> bool:
    """Every binding of ``held`` reaching the call that wraps it sits under one of the callee's
    tests (mapped to the names the caller passes) holding true."""
    keys = set()
    for condition in false_keys:
        root, _, rest = condition.key.partition(".")
        if root not in function.params:
            continue
        position = function.params.index(root) - function.receiver_params
        passed = argument(site.node, root, position)
        caller_root = dotted_name(passed.value) if passed is not None else None
        if caller_root is not None:
            keys.add(f"{caller_root}.{rest}" if rest else caller_root)
    if not keys:
        return False
    wraps = [a for a in model.reaching(held, site.ctx, site.order)
             if a.value is not None and model.kinds(a.value, a.ctx, a.order).get("ddp")]
    if not wraps:
        return False
    return all(any(c.key in keys and c.holds for c in model.bindings.paths.of(a.ctx)) for a in wraps)


def _wrapper_classes(model, node: cst.BaseExpression) -> Optional[bool]:
    """True when ``node`` names DDP/DataParallel or a tuple of them only, False for a tuple
    that holds one of them among other classes, None when it names neither."""
    elements = [e.value for e in node.elements] if type(node) in (cst.Tuple, cst.List, cst.Set) else [node]
    wrappers = [model.imports.qualify(e) in DDP_WRAPPERS for e in elements]
    if not any(wrappers):
        return None
    return all(wrappers)


def _narrows(model, test: cst.BaseExpression, name: str, holds: bool, ctx: Context, order: int, depth: int):
    """What ``test`` being ``holds`` says about whether ``name`` is a DDP/DataParallel wrapper."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _narrows(model, test.expression, name, not holds, ctx, order, depth)
    if type(test) is cst.BooleanOperation:
        # Both sides of a true `and`, and of a false `or`, hold as the whole does.
        if holds == (type(test.operator) is cst.And):
            for side in (test.left, test.right):
                found = _narrows(model, side, name, holds, ctx, order, depth)
                if found is not None:
                    return found
        return None
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        # `type(model) in (DP, DDP)`, `type(model) is DDP`
        left, target = test.left, test.comparisons[0]
        if not (type(left) is cst.Call and dotted_name(left.func) == "type" and len(left.args) == 1
                and dotted_name(left.args[0].value) == name):
            return None
        if type(target.operator) in (cst.NotIn, cst.IsNot, cst.NotEqual):
            holds = not holds
        elif not type(target.operator) in (cst.In, cst.Is, cst.Equal):
            return None
        exact = _wrapper_classes(model, target.comparator)
        if exact is None:
            return None
        return (True if exact else None) if holds else False
    if not type(test) is cst.Call or not test.args:
        return None
    func = dotted_name(test.func)
    first = dotted_name(test.args[0].value)
    if func == "isinstance" and len(test.args) == 2 and first == name:
        exact = _wrapper_classes(model, test.args[1].value)
        if exact is None:
            return None
        return (True if exact else None) if holds else False
    if func == "hasattr" and len(test.args) == 2 and first == name:
        attribute = test.args[1].value
        if type(attribute) is cst.SimpleString and attribute.evaluated_value == "module":
            return _HAS_MODULE if holds else False
        return None
    if depth >= 2 or first != name:
        return None
    # A helper that answers the same question: `def is_parallel(m): return type(m) in (DP, DDP)`.
    found = model.values.callee(test, ctx, order)
    if found is None:
        return None
    owner, info = found
    params = info.params[1:] if info.class_name is not None else info.params
    if not params or len(info.return_sites) != 1:
        return None
    site = info.return_sites[0]
    return _narrows(owner, site.value, params[0], holds, site.ctx, site.order, depth + 1)


class BuiltBy(Question[frozenset]):
    """The calls of one constructor (`DistributedSampler(...)`) a value may hold, by node id:
    for "is this loader built on that sampler"."""

    unknown: frozenset = frozenset()

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname
        self.key = f"built-by:{qualname}"

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[frozenset]:
        if type(expr) is cst.Call:
            qual = flow.model.imports.qualify(expr.func)
            if qual == self.qualname:
                return frozenset({id(expr)})
            if qual == BATCH_SAMPLER and expr.args and expr.args[0].keyword is None and not expr.args[0].star:
                # `BatchSampler(sampler, batch_size, drop_last)` draws its indices from that sampler.
                return flow.ask(self, expr.args[0].value, ctx, order)
        return None

    def combine(self, answers: Sequence[frozenset]) -> frozenset:
        return frozenset().union(*answers)


def declared_kinds(model, name: str, ctx: Context) -> frozenset:
    """The kinds of the class a name's annotated assignment declares (`self.model:
    MarigoldPipeline = model`, the value handed in by a caller elsewhere): what the value flow
    cannot follow, the author wrote down."""
    for assignment in model.assignments(name, ctx):
        statement = assignment.statement
        if type(statement) is not cst.AnnAssign:
            continue
        declared = statement.annotation.annotation
        qual = model.imports.qualify(declared)
        symbol = model.symbol(qual) if qual is not None else None
        if symbol is not None and symbol.kind == "class":
            return class_kinds(symbol.model, symbol.info)
        local = model.facts.classes.get(dotted_name(declared) or "")
        if local is not None:
            return class_kinds(model, local)
    return frozenset()
