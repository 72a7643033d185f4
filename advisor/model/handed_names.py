"""The calls that hand a name on as an argument, indexed once per file: where a value bound to
that name goes next (`model = nn.DataParallel(model)`, then `model_training(args, model)`;
`model = CaptionModel(...)`, then `Trainer(model=model)`). Built in one pass over the calls, so
that asking for every wrap or construction of a file costs linear time, whatever its shape."""

from __future__ import annotations

from typing import Dict, List, Tuple

import libcst as cst

from advisor.model.facts import CallSite
from advisor.model.names import dotted_name


def calls_handing(model, site: CallSite, name: str) -> List[CallSite]:
    """The calls after ``site``, in its function, that take ``name`` as an argument, in order."""
    index: Dict[Tuple[int, str], List[CallSite]] = model.shared("handed-names", _index)
    function = site.ctx.function
    return [c for c in index.get((id(function), name), ()) if c.order > site.order]


def _index(model) -> Dict[Tuple[int, str], List[CallSite]]:
    out: Dict[Tuple[int, str], List[CallSite]] = {}
    for call in model.facts.calls:
        names = {dotted_name(a.value) for a in call.node.args}
        names.discard(None)
        for name in names:
            out.setdefault((id(call.ctx.function), name), []).append(call)
    return out


def handed_sites(model) -> Dict[int, List[Tuple[CallSite, cst.Arg]]]:
    """For each function of the file handed by name to a call (`trainer.eval(evaluate, path)`,
    by the id of its FunctionInfo), those calls and the argument that hands it: a callback, run
    where the callee decides, under the state (eval mode, no_grad) it sets up."""
    return model.shared("handed-functions", _handed_sites)


def _handed_sites(model) -> Dict[int, List[Tuple[CallSite, cst.Arg]]]:
    out: Dict[int, List[Tuple[CallSite, cst.Arg]]] = {}
    for call in model.facts.calls:
        for arg in call.node.args:
            name = arg.value.value if type(arg.value) is cst.Name else None
            if name is None or arg.star or name not in model.facts.function_defs:
                continue
            info = model.bindings.function(name, call.ctx, call.order)
            if info is not None:
                out.setdefault(id(info), []).append((call, arg))
    return out


def handed_imports(model) -> Dict[int, List[Tuple[CallSite, cst.Arg]]]:
    """For each function of another project module that a call of this file hands on as an
    argument (`training.train(model, loader, loss_fn=loss_functions.wave_pml)`, or a name bound
    to that reference, or to a keyword-only `functools.partial` of it): those calls and the
    arguments that hand it, by the id of the function's FunctionInfo."""
    return model.shared("handed-imported-functions", _handed_imports)


def _handed_imports(model) -> Dict[int, List[Tuple[CallSite, cst.Arg]]]:
    out: Dict[int, List[Tuple[CallSite, cst.Arg]]] = {}
    if getattr(model, "project", None) is None:
        return out
    for call in model.facts.calls:
        for arg in call.node.args:
            if arg.star or type(arg.value) not in (cst.Name, cst.Attribute):
                continue
            target = imported_function(model, arg.value, call.ctx, call.order)
            if target is not None:
                out.setdefault(id(target[1]), []).append((call, arg))
    return out


def imported_function(model, expr: cst.BaseExpression, ctx, order: int, follow: bool = True):
    """The function of another project module that ``expr`` names, as (its module's model, its
    FunctionInfo): an imported function (`loss_functions.wave_pml`, `from losses import dice`),
    or, one hop back, a name every binding of which that reaches ``order`` names one and the
    same such function."""
    qual = model.imports.qualify(expr) if type(expr) in (cst.Name, cst.Attribute) else None
    if qual is not None:
        symbol = model.symbol(qual)
        if symbol is not None and symbol.kind == "function" and symbol.info is not None and symbol.model is not model:
            return symbol.model, symbol.info
        return None
    if not follow or type(expr) is not cst.Name:
        return None
    reach = model.bindings.reaching(expr.value, ctx, order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return None
    found = None
    for assignment in reach.assignments:
        value = keyword_partial(model, assignment.value)
        if assignment.index is not None or assignment.augmented or value is None:
            return None
        target = imported_function(model, value, assignment.ctx, assignment.order, follow=False)
        if target is None or (found is not None and target[1] is not found[1]):
            return None
        found = target
    return found


def keyword_partial(model, value):
    """The function of `functools.partial(fn, key=value)` (diffusers' scripts bind
    `compute_embeddings_fn` so, then call it each step), else ``value``. Only a partial that
    binds keywords alone: the call's positional arguments are then the function's own."""
    if type(value) is not cst.Call or model.imports.qualify(value.func) != "functools.partial":
        return value
    args = value.args
    if not args or args[0].keyword is not None or args[0].star or any(a.keyword is None for a in args[1:]):
        return value
    return args[0].value


# How many project functions deep a handed value is followed (`build_engine(cfg, model)` that
# builds `Engine(model)`): a factory hop or two, not the whole call graph.
_HAND_DEPTH = 2


def hands_to_training(model, site: CallSite, name: str, depth: int = 0) -> bool:
    """``name``, bound at ``site``, is handed later in its function to project code that trains
    it: a function that trains, an instance of a project class one of whose methods trains (an
    engine, `Engine(datamanager, model)`), or a project function that hands its parameter on to
    one of those (`build_engine(cfg, model)`)."""
    for call in calls_handing(model, site, name):
        for owner, info in model.calls.targets(call):
            if owner.trains(info) or owner.has_training_loop(info):
                return True
            if depth < _HAND_DEPTH:
                param = _parameter_filled(info, call.node, name)
                if param is not None and _hands_parameter_on(owner, info, param, depth + 1):
                    return True
        built = model.values.built_class(call.node)
        if built is not None and _class_trains(*built):
            return True
    return False


def _parameter_filled(info, call: cst.Call, name: str):
    """The parameter of ``info`` that ``call`` fills with ``name`` (None when a spread hides it)."""
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if dotted_name(arg.value) == name:
                return arg.keyword.value if arg.keyword.value in info.params else None
            continue
        if dotted_name(arg.value) == name:
            index = position + info.receiver_params
            return info.params[index] if index < len(info.params) else None
        position += 1
    return None


def _hands_parameter_on(owner, info, param: str, depth: int) -> bool:
    """The function hands its parameter to training code (from its first statement on)."""
    index: Dict[Tuple[int, str], List[CallSite]] = owner.shared("handed-names", _index)
    if info.body_ctx is None or not index.get((id(info), param)):
        return False
    return hands_to_training(owner, _Start(info), param, depth)


class _Start:
    """A stand-in site at the top of a function: every call of its body comes after it."""

    def __init__(self, info) -> None:
        self.ctx = info.body_ctx
        self.order = -1


def _class_trains(owner, cls) -> bool:
    """Some method of the project class (or of a project base class it names) trains; asked
    once per class."""
    known = owner.shared("handed-names.class-trains", lambda m: {})
    if id(cls) not in known:
        known[id(cls)] = _methods_train(owner, cls)
    return known[id(cls)]


def _methods_train(owner, cls) -> bool:
    seen = set()
    stack = [(owner, cls)]
    while stack and len(seen) < 8:
        model, info = stack.pop()
        if id(info) in seen:
            continue
        seen.add(id(info))
        prefix = info.name + "."
        if any(key.startswith(prefix) and (model.trains(f) or model.has_training_loop(f))
               for key, f in model.facts.functions.items()):
            return True
        for base in info.bases:
            local = model.facts.classes.get(base)
            if local is not None:
                stack.append((model, local))
                continue
            symbol = model.symbol(base) if "." in base else None
            if symbol is not None and symbol.kind == "class":
                stack.append((symbol.model, symbol.info))
    return False


def stored_for_training(model, site: CallSite) -> bool:
    """The value built at ``site`` is stored on an instance of a project class (`trainer.net =
    DataParallel(trainer.net)`, `trainer = Trainer(...)` earlier in the function) whose
    training method calls that attribute (`self.net(x)` in a method that trains)."""
    for (scope, target), found in model.facts.assignments.items():
        if target.count(".") != 1 or target.startswith("self.") or scope != site.ctx.scope:
            continue
        if not any(_holds(a.value, site.node) for a in found):
            continue
        holder, attr = target.split(".")
        for binding in model.reaching(holder, site.ctx, site.order):
            if type(binding.value) is not cst.Call or binding.index is not None:
                continue
            built = model.values.built_class(binding.value)
            if built is not None and _calls_attribute_in_training(*built, attr):
                return True
    return False


def _holds(value, call: cst.Call) -> bool:
    """``value`` is the call, or a method chained on it (`DataParallel(net).cuda()`)."""
    while value is not None and value is not call:
        value = value.func.value if type(value) is cst.Call and type(value.func) is cst.Attribute else None
    return value is call


def _calls_attribute_in_training(owner, cls, attr: str) -> bool:
    callee = f"self.{attr}"
    for site in owner.facts.calls:
        info = site.ctx.function
        if info is None or info.class_name != cls.name or dotted_name(site.node.func) != callee:
            continue
        if owner.trains(info) or owner.has_training_loop(info):
            return True
    return False
