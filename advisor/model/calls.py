"""Which functions a call runs, in this file or in another module of the project, and who calls
a function: the edges that training markers and heat travel along.

A call runs:
- a function of the file (`helper(...)`: the `def` bound where it is called), or a method
  (`self.step(...)`; `obj.step(...)` when only one class of the file defines `step`);
- a function imported from the project (`from utils import accuracy`);
- the `forward` (or `__call__`) of a module instance it is called on (`criterion(pred, y)` after
  `criterion = BoxLoss()`), or a method of that instance (`trainer.train_step(...)`).

Targets and callers are (FileModel, FunctionInfo) and (FileModel, CallSite) pairs: a function of
another file is asked about in that file's own model.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from advisor.model import open_questions
from advisor.model.facts import CallSite, ClassInfo, FunctionInfo
from advisor.model.handed_names import handed_imports, handed_sites, imported_function, keyword_partial
from advisor.model.instances import instances_of
from advisor.model.named_methods import method_family
from advisor.model.names import DDP_WRAPPERS, dotted_name, last_segment
from advisor.model.vocabulary import OPTIMIZER_NAME

DATA_PARALLEL = "torch.nn.parallel.DataParallel"

Target = Tuple[object, FunctionInfo]
Caller = Tuple[object, CallSite]
# Methods every torch module has, and names that hold one: `model.train()` on a value of no known
# class is nn.Module's, whatever class of the file also defines a `train`.
_MODULE_METHODS = frozenset({"train", "eval", "to", "cuda", "cpu", "half", "float", "parameters", "state_dict",
                             "load_state_dict", "zero_grad", "apply", "modules", "requires_grad_"})
# Methods with an underscore that torch, its loggers and common libraries define: a call of
# one on an untyped object is most likely theirs, whatever the project also defines.
_LIBRARY_METHODS = frozenset({
    "state_dict", "load_state_dict", "zero_grad", "requires_grad_", "named_parameters", "named_modules",
    "named_children", "named_buffers", "register_buffer", "register_parameter", "register_forward_hook",
    "register_hook", "set_epoch", "get_last_lr", "get_lr", "add_scalar", "add_scalars", "add_image",
    "add_images", "add_histogram", "add_figure", "add_text", "add_graph", "add_param_group", "log_metrics",
    "log_dict", "log_image", "log_images", "set_description", "set_postfix", "set_postfix_str",
    "save_pretrained", "from_pretrained", "push_to_hub", "add_argument", "parse_args", "parse_known_args",
    "add_module", "set_grad_enabled", "clip_grad_norm_", "unscale_", "get_scale", "wait_for_everyone",
    "gather_for_metrics", "reduce_mean", "all_reduce", "all_gather", "is_main_process", "print_log",
})
_MODEL_RECEIVER = re.compile(r"(^|_)(model|u?net|network|module|encoder|decoder|backbone|classifier|generator|discriminator|vae|transformer)s?$", re.IGNORECASE)
_INSTANCE_CALL = ("forward", "__call__")
_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})


# Calls that run the function handed first once per item of the iterables after it.
_APPLIERS = frozenset({"multi_apply", "map"})


def _applier(site: CallSite) -> Optional[str]:
    """The name of the function (or `self` method) a `multi_apply(fn, ...)` or `map(fn, ...)`
    call runs per item; None for any other call."""
    qual = site.qualname or dotted_name(site.node.func) or ""
    if qual.rsplit(".", 1)[-1] not in _APPLIERS:
        return None
    if "." in qual and not qual.startswith(("builtins.", "mmdet.", "mmcv.", "mmdet3d.", "mmseg.")):
        return None  # `dataset.map(fn)`, `pool.map(fn, items)`: another object's method
    args = site.node.args
    if len(args) < 2 or args[0].keyword is not None or args[0].star:
        return None
    func = args[0].value
    if type(func) is cst.Name:
        return func.value
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        return func.attr.value
    return None


def class_method(model, info: ClassInfo, name: str, depth: int = 0) -> Optional[Target]:
    """The method ``name`` of a class, found in the class or in its bases (the file's own, or
    the project's)."""
    found = model.bindings.method(info.scope, name)
    if found is not None:
        return model, found
    if depth > 4:
        return None
    for base in info.bases:
        local = model.facts.classes.get(base)
        if local is not None and local is not info:
            hit = class_method(model, local, name, depth + 1)
        else:
            symbol = model.symbol(base)
            hit = class_method(symbol.model, symbol.info, name, depth + 1) if symbol is not None and symbol.kind == "class" else None
        if hit is not None:
            return hit
    return None


def _abstract(info: FunctionInfo) -> bool:
    """The body only documents or refuses (`raise NotImplementedError`, `pass`, `...`)."""
    for statement in info.node.body.body:
        if not type(statement) is cst.SimpleStatementLine:
            return False
        for small in statement.body:
            if type(small) is cst.Pass:
                continue
            if type(small) is cst.Expr and type(small.value) in (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis):
                continue
            if type(small) is cst.Raise and small.exc is not None and "NotImplementedError" in (dotted_name(
                small.exc.func if type(small.exc) is cst.Call else small.exc) or ""):
                continue
            return False
    return True


class CallGraph:
    def __init__(self, model) -> None:
        self.model = model
        self._targets: Dict[int, List[Target]] = {}
        self._incoming: Dict[int, List[Caller]] = {}
        self._scans: Dict[Tuple[str, bool, bool, bool], _CallerScan] = {}
        self._by_name: Optional[Dict[str, List[CallSite]]] = None
        self._sites: Optional[Dict[int, CallSite]] = None
        self._instance_calls: List[CallSite] = []
        self._defined_in_loops: Optional[set] = None
        # Base name -> the direct subclasses of the file and of its importers, found once; and
        # the overrides already looked up (every `self.m()` call of a class asks).
        self._subclasses: Optional[Dict[str, List[Tuple[object, ClassInfo]]]] = None
        self._override_hits: Dict[Tuple[str, str], List[Target]] = {}
        self._result_calls: Optional[List[CallSite]] = None

    def targets_of_expression(self, call: cst.Call, ctx, order) -> List[Target]:
        """`targets` for a call node (every call the walk saw is a site)."""
        if self._sites is None:
            self._sites = {id(s.node): s for s in self.model.facts.calls}
        site = self._sites.get(id(call))
        return self.targets(site) if site is not None else []

    def targets(self, site: CallSite) -> List[Target]:
        memo = self._targets
        known = memo.get(id(site))
        if known is not None:
            tracker = open_questions.current()
            if tracker.leaning:
                tracker.read(memo, id(site))
            return known
        # Asked again while being found (a method's instance whose value needs this call's
        # callee): nothing yet, and the answer holds until the first ask closes.
        return open_questions.remembered(memo, id(site), lambda: _distinct(self._find(site) + self._handed(site) + self._stepped(site) + self._called_back(site) + self._applied(site)),
                                         guard=[])

    def _called_back(self, site: CallSite) -> List[Target]:
        """`loss = get_loss(model, batch)` where `get_loss` is a parameter of the function around
        the call, never rebound there: the project functions its callers hand it by name
        (`trainer.train(get_loss, path)`, `train_step(forward_step_func=forward_step)`)."""
        func = site.node.func
        info = site.ctx.function
        if type(func) is not cst.Name or info is None or func.value not in info.params:
            return []
        reach = self.model.bindings.reaching(func.value, site.ctx, site.order)
        if reach.assignments or reach.parameter is not info:
            return []
        position = _position(info, func.value)
        out: List[Target] = []
        for owner, call in self.callers(info):
            arg = _argument(call.node, func.value, position)
            if arg is None or type(arg.value) not in (cst.Name, cst.Attribute):
                continue
            target = owner.bindings.function(arg.value.value, call.ctx, call.order) if type(arg.value) is cst.Name else None
            hit = (owner, target) if target is not None else imported_function(owner, arg.value, call.ctx, call.order)
            if hit is not None and hit not in out:
                out.append(hit)
        return out

    def _stepped(self, site: CallSite) -> List[Target]:
        """`scaler.step(optimizer)`: the loss scaler calls the optimizer's own `step()` (a LARS or
        LAMB class of the project's), unless the gradients hold an inf or a NaN."""
        if site.method != "step" or site.receiver is None or not site.node.args:
            return []
        first = site.node.args[0]
        if first.keyword is not None or first.star:
            return []
        if "scaler" not in self.model.kinds(site.receiver, site.ctx, site.order):
            return []
        owners = instances_of(self.model, first.value, site.ctx, site.order)
        return [hit for hit in (class_method(m, c, "step") for m, c in owners) if hit is not None]

    def _overrides(self, class_name: Optional[str], method: Optional[str]) -> List[Target]:
        """The methods of the file's direct subclasses of ``class_name`` that implement
        ``method``: a template method's loop calls `self.batch_update(...)`, which only the
        subclasses (`TrainEpoch`, `ValidEpoch`) define. Subclasses in the project files that
        import this one count too (`class ImageSoftmaxEngine(Engine)` overriding the
        `forward_backward` that `Engine.train`'s loop calls)."""
        if class_name is None or method is None:
            return []
        key = (class_name, method)
        found = self._override_hits.get(key)
        if found is None:
            found = self._override_hits[key] = [
                (owner, hit) for owner, info in self._subclasses_of(class_name)
                for hit in (owner.bindings.method(info.scope, method),) if hit is not None
            ]
        return found

    def subclasses_of(self, class_name: str) -> List[Tuple[object, ClassInfo]]:
        """The direct subclasses of ``class_name`` in the file and in the files that import it."""
        return self._subclasses_of(class_name)

    def _subclasses_of(self, class_name: str) -> List[Tuple[object, ClassInfo]]:
        if self._subclasses is None:
            index: Dict[str, List[Tuple[object, ClassInfo]]] = {}
            model = self.model
            for info in model.facts.classes.values():
                for base in info.bases:
                    index.setdefault(base, []).append((model, info))
            for other in self._importers():
                for info in other.facts.classes.values():
                    for base in {last_segment(b) for b in info.bases}:
                        index.setdefault(base, []).append((other, info))
            self._subclasses = index
        return self._subclasses.get(class_name, [])

    def _module_class(self, class_name: Optional[str]) -> bool:
        info = self.model.facts.classes.get(class_name or "")
        return info is not None and "module" in class_kinds(self.model, info)

    def _loop_functions(self) -> set:
        """The names of the functions defined in a loop body."""
        if self._defined_in_loops is None:
            self._defined_in_loops = {
                info.node.name.value for info in self.model.facts.functions.values() if info.ctx is not None and info.ctx.loop is not None
            }
        return self._defined_in_loops

    def _handed(self, site: CallSite) -> List[Target]:
        """A function defined in the body of the loop that hands it, positionally, to this call
        (`def train_step(): ...` then `gpu_timer(train_step)`): built on every iteration to be
        run there, by a helper the file cannot see into. Keyword callbacks (`Thread(target=f)`)
        run elsewhere."""
        loop = site.ctx.loop
        if loop is None or not self._loop_functions():
            return []
        out: List[Target] = []
        for arg in site.node.args:
            if type(arg.value) is cst.Name and not arg.star and arg.keyword is None and arg.value.value in self._loop_functions():
                info = self.model.bindings.function(arg.value.value, site.ctx, site.order)
                if info is not None and info.ctx is not None and info.ctx.loop is loop:
                    out.append((self.model, info))
        return out

    def _applied(self, site: CallSite) -> List[Target]:
        """`multi_apply(self.loss_single, scores, targets)` (mmdet's map over decoder layers) or
        `map(fn, items)`: the function handed first runs once per item, there and then."""
        if _applier(site) is None:
            return []
        func = site.node.args[0].value
        model = self.model
        if type(func) is cst.Name:
            local = model.bindings.function(func.value, site.ctx, site.order)
            return [(model, local)] if local is not None else []
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self" and site.ctx.class_name:
            info = model.facts.classes.get(site.ctx.class_name)
            hit = class_method(model, info, func.attr.value) if info is not None else None
            return [hit] if hit is not None else []
        return []

    def _aliased_functions(self, name: str, site: CallSite) -> List[Target]:
        """`step = amp_step if use_amp else plain_step` (or one name per arm of an `if`), then
        `step(engine, loss)`: the call runs one of the functions the name is bound to. Every
        binding that reaches the call must name a `def` of the file."""
        model = self.model
        reach = model.reaching(name, site.ctx, site.order)
        if not reach:
            return []
        out: List[Target] = []
        for assignment in reach:
            values = [assignment.value]
            if type(assignment.value) is cst.IfExp:
                values = [assignment.value.body, assignment.value.orelse]
            for value in values:
                value = self._keyword_partial(value)
                if assignment.index is not None or not type(value) is cst.Name:
                    return []
                if model.reaching(value.value, assignment.ctx, assignment.order):
                    return []
                info = model.bindings.function(value.value, assignment.ctx, assignment.order)
                if info is None:
                    return []
                out.append((model, info))
        return out

    def _attribute_functions(self, site: CallSite) -> List[Target]:
        """`self.loss_fn(out, target)` where the class binds `self.loss_fn = _focal_loss` (or one
        of two functions by a conditional expression): the project functions the attribute holds.
        Every binding of the attribute in the class must name one."""
        model = self.model
        scope = site.ctx.class_scope
        bound = model.facts.assignments.get((scope, f"self.{site.method}"), ()) if scope else ()
        out: List[Target] = []
        for assignment in bound:
            value = assignment.value
            values = [value.body, value.orelse] if type(value) is cst.IfExp else [value]
            for one in values:
                one = self._keyword_partial(one) if one is not None else None
                if assignment.index is not None or type(one) is not cst.Name:
                    return []
                info = model.bindings.function(one.value, assignment.ctx, assignment.order)
                if info is not None:
                    out.append((model, info))
                    continue
                qual = model.imports.qualify(one)
                symbol = model.symbol(qual) if qual is not None else None
                if symbol is None or symbol.kind != "function" or symbol.info is None:
                    return []
                out.append((symbol.model, symbol.info))
        return out

    def _returned_closures(self, name: str, site: CallSite) -> List[Target]:
        """`step_fn = losses.get_step_fn(graph, optimizer)`, then `step_fn(model, batch)`: a
        factory that returns a function it defines (score_sde's `get_step_fn` returning its
        `step_fn`) hands back that function, which the call runs. Every binding of the name that
        reaches the call must be a call of such a factory."""
        model = self.model
        reach = model.bindings.reaching(name, site.ctx, site.order)
        if not reach.closed or reach.parameter is not None or not reach.assignments:
            return []
        out: List[Target] = []
        for assignment in self._through_attributes(reach.assignments):
            value = assignment.value
            if type(value) is not cst.Call or assignment.index is not None or assignment.augmented:
                return []
            factories = self.targets_of_expression(value, assignment.ctx, assignment.order)
            if not factories:
                return []
            for owner, factory in factories:
                inner = returned_functions(owner, factory)
                if not inner:
                    return []
                # `eval_step_fn = get_step_fn(sde, train=False)`: the step function it returns
                # updates nothing (its steps sit under `if train:`), so its loop evaluates.
                out.extend((owner, info) for info in inner if not _steps_switched_off(owner, info, factory, value))
        return out

    def _through_attributes(self, assignments) -> list:
        """The bindings, with `step_fn = self.train_step_fn` replaced by the stores of that
        attribute in its class (`self.train_step_fn = self._make_train_step_fn()` in `__init__`,
        the layout of the StepByStep trainer): the factory call is made once, its function
        called every step through the attribute."""
        out = []
        for assignment in assignments:
            value = assignment.value
            name = dotted_name(value) if type(value) is cst.Attribute else None
            scope = assignment.ctx.class_scope
            if name is None or not name.startswith("self.") or name.count(".") != 1 or scope is None:
                out.append(assignment)
                continue
            stores = self.model.facts.assignments.get((scope, name))
            if not stores:
                return [assignment]  # set where the file does not show: not a factory's call
            out.extend(stores)
        return out

    def _keyword_partial(self, value: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
        return keyword_partial(self.model, value)

    def _dispatched(self, func: cst.BaseExpression, site: CallSite) -> List[Target]:
        """`trainer = {"Synapse": trainer_synapse}` then `trainer[dataset_name](args, net)`: the
        call runs one of the functions the dict literal holds (of the file, or imported). Every
        binding of the name that reaches the call must be such a dict."""
        model = self.model
        out: List[Target] = []
        for name in self.dispatch_values(func, site.ctx, site.order):
            local = model.bindings.function(name.value, site.ctx, site.order)
            if local is not None:
                out.append((model, local))
                continue
            qual = model.imports.qualify(name)
            symbol = model.symbol(qual) if qual is not None else None
            if symbol is not None and symbol.kind == "function" and symbol.info is not None:
                out.append((symbol.model, symbol.info))
        return out

    def dispatch_values(self, func: cst.BaseExpression, ctx, order) -> List[cst.Name]:
        """The names a dispatch dict holds, when ``func`` is `table[key]` and every binding of
        `table` that reaches the call is a dict literal of plain names."""
        if type(func) is not cst.Subscript or type(func.value) is not cst.Name:
            return []
        reach = self.model.bindings.reaching(func.value.value, ctx, order)
        if not reach.closed or reach.parameter is not None:
            return []
        out: List[cst.Name] = []
        for assignment in reach.assignments:
            value = assignment.value
            if assignment.index is not None or type(value) is not cst.Dict or not value.elements:
                return []
            for element in value.elements:
                if type(element) is not cst.DictElement or type(element.value) is not cst.Name:
                    return []
                out.append(element.value)
        return out

    def _star_imported(self, name: str, site: CallSite) -> Optional[Target]:
        """`accuracy(...)` in a file that says `from utils import *` and binds no `accuracy`
        itself: the project function of that name in the star-imported module (the last one
        that defines it, as Python's later star import wins)."""
        symbol = self.star_symbol(name, site)
        if symbol is not None and symbol.kind == "function" and symbol.info is not None:
            return (symbol.model, symbol.info)
        return None

    def star_symbol(self, name: str, site: CallSite):
        """The project symbol (function, class, value) a name this file never binds comes from
        through its star imports, if any."""
        return self.star_symbol_at(name, site.ctx, site.order)

    def star_symbol_at(self, name: str, ctx, order):
        """`star_symbol` for a name read at ``ctx`` and ``order``."""
        model = self.model
        modules = model.imports.star_modules
        if not modules or model.reaching(name, ctx, order):
            return None
        for module in reversed(modules):
            symbol = model.symbol(f"{module}.{name}" if not module.endswith(".") else f"{module}{name}")
            if symbol is not None:
                return symbol
        return None

    def _find(self, site: CallSite) -> List[Target]:
        model = self.model
        func = site.node.func
        if site.method == "apply" and site.receiver is not None:
            applied = self._autograd_function(site)
            if applied is not None:
                return applied
        if site.qualname is not None:
            symbol = model.symbol(site.qualname)
            if symbol is not None and symbol.kind == "function" and symbol.info is not None:
                return [(symbol.model, symbol.info)]
            return []
        if type(func) is cst.Subscript:
            return self._dispatched(func, site)
        if type(func) is cst.Name:
            local = model.bindings.function(func.value, site.ctx, site.order)
            if local is not None:
                return [(model, local)]
            if func.value in model.facts.classes:
                return []  # building an instance
            aliased = self._aliased_functions(func.value, site)
            if aliased:
                return aliased
            closures = self._returned_closures(func.value, site)
            if closures:
                return closures
            starred = self._star_imported(func.value, site)
            if starred is not None:
                return [starred]
        elif type(func) is cst.Attribute and site.receiver_name in ("self", "cls"):
            local = model.bindings.method(site.ctx.class_scope, site.method) if site.ctx.class_scope else None
            if local is None and site.ctx.class_name:
                local = model.resolve(f"{site.ctx.class_name}.{site.method}")
            caller = site.ctx.function
            if local is not None and (
                _abstract(local)
                or not self._module_class(site.ctx.class_name)
                or (caller is not None and caller.direct_marker)
            ):
                # A subclass's override runs instead for its instances: an abstract method's
                # always, a trainer's (`FSDPTrainer.clip_gradient` under `BasicTrainer.train`'s
                # loop) too. Not a module's: a subclass of a trained network that overrides its
                # methods is most often an inference wrapper (`Checkpoint(ColBERT)` whose
                # `query` runs under no_grad and hands results to the host). Unless the module's
                # calling method trains itself (`ERM.update` runs backward and steps): the hook
                # it calls is one its training methods (`GroupDRO.compute_loss`) override.
                return [(model, local)] + self._overrides(site.ctx.class_name, site.method)
            if local is not None:
                return [(model, local)]
            info = model.facts.classes.get(site.ctx.class_name or "")
            hit = class_method(model, info, site.method) if info is not None else None
            if hit is not None:
                return [hit]
            held = self._attribute_functions(site)
            if held:
                return held
        if type(func) is cst.Attribute and _super_call(site.receiver) and site.ctx.class_name and site.method != "__init__":
            # `super().generator_trainstep(y, z)`, `super(Trainer, self).step()`: the method a
            # base class of the project (this file's or another module's) defines. Not
            # `super().__init__(...)`: how a subclass builds its base, which `constructions`
            # reads; taken as a call, it would hide where the instances are built.
            info = model.facts.classes.get(site.ctx.class_name)
            hit = self._base_method(info, site.method) if info is not None else None
            if hit is not None:
                return [hit]
        if type(func) is cst.Attribute and type(site.receiver) is cst.Call:
            # `Options().init(parser)`, `Trainer(cfg).fit()`: a method of the instance just built
            # (or of what a helper returns). Only the instance's class decides.
            owners = instances_of(model, site.receiver, site.ctx, site.order)
            return [hit for hit in (class_method(m, c, site.method) for m, c in owners) if hit is not None]
        # A module instance called (`criterion(...)`, `self.loss_fn(...)`), or a method of an instance.
        if dotted_name(func) is None:
            return []
        if type(func) is cst.Attribute and site.receiver is not None and dotted_name(site.receiver) is not None:
            owners = instances_of(model, site.receiver, site.ctx, site.order)
            found = [class_method(m, c, site.method) for m, c in owners]
            hits = [f for f in found if f is not None]
            if hits:
                return hits
            # `self.focal_loss(...)` where the attribute holds a module instance (of this module
            # or another): its forward runs.
            called = self._instance_calls_of(func, site)
            if called:
                return called
            if any(model.kinds(site.receiver, site.ctx, site.order).values()):
                # `model.train()` on a DataParallel wrapper, `loader.sampler`: torch's object,
                # not the one class of the file with a method of that name.
                return []
            receiver = dotted_name(site.receiver)
            if site.method in _MODULE_METHODS and (
                    _MODEL_RECEIVER.search(receiver.rsplit(".", 1)[-1]) or receiver.count(".") >= 2):
                # `self._model.train()`, `self.model.unet.train()` (a submodule of an attribute):
                # nn.Module's mode switch, not a recipe's own `train`.
                return []
            built = self._built_by_name(site)
            if built:
                return built
            local = model.resolve(f".{site.method}")
            if local is not None:
                return [(model, local)]
            return self._method_family(site)
        return self._instance_calls_of(func, site)

    def _method_family(self, site: CallSite) -> List[Target]:
        """`model.train_on_batch(batch)` where `model` is an algorithm a factory built from a
        registry: nothing types the receiver, but every project method of that name near the file
        is a base class's and its overrides' (`named_methods.method_family`). Only for names a
        library object is unlikely to share: with an underscore inside, not a torch or logging
        method's."""
        name = site.method
        if name is None or name.startswith("_") or "_" not in name or name in _LIBRARY_METHODS:
            return []
        return method_family(self.model, name)

    def _built_by_name(self, site: CallSite) -> List[Target]:
        """`model.optimize_parameters(i)` where `model = create_model(opt)`, a project factory
        in a module that loads its package's modules by name and builds the class the options
        name: the method of that name of every class of those modules (found in the class or
        its bases)."""
        model = self.model
        project = getattr(model, "project", None)
        name = dotted_name(site.receiver)
        if project is None or name is None:
            return []
        bound = model.reaching(name, site.ctx, site.order)
        if not bound:
            return []
        loaded: List[object] = []
        for assignment in bound:
            value = assignment.value
            if type(value) is not cst.Call or assignment.index is not None:
                return []
            found = model.values.callee(value, assignment.ctx, assignment.order)
            owner = found[0] if found is not None else None
            modules = project.loaded_by(owner.real_path) if owner is not None and owner.real_path else []
            if not modules:
                return []
            loaded.extend(m for m in modules if m not in loaded)
        out: List[Target] = []
        for path in loaded:
            other = project.model(path)
            if other is None:
                continue
            for cls in other.facts.classes.values():
                hit = class_method(other, cls, site.method)
                if hit is not None and not any(hit[1] is known for _, known in out):
                    out.append(hit)
        return out

    def _instance_calls_of(self, func: cst.BaseExpression, site: CallSite) -> List[Target]:
        """The `forward` (or `__call__`) of each class the called value may be an instance of."""
        out: List[Target] = []
        for owner, info in instances_of(self.model, func, site.ctx, site.order):
            for name in _INSTANCE_CALL:
                hit = class_method(owner, info, name)
                if hit is not None:
                    out.append(hit)
                    break
            if owner is self.model and info.name == site.ctx.class_name:
                # The module calls itself (`model = self.train()`, then `model(x)` in a base
                # class's `fit` loop): the forward of the subclass it is an instance of.
                out.extend(hit for hit in self._overrides(info.name, "forward") if hit not in out)
        return out

    def callers(self, info: FunctionInfo) -> List[Caller]:
        """The calls, in this file and in the project files that import it, that run ``info``."""
        return open_questions.remembered(self._incoming, id(info), lambda: self._callers(info))

    def _callers(self, info: FunctionInfo) -> List[Caller]:
        name = info.node.name.value
        # A nested function is called only where it is defined.
        returned = info.ctx is not None and info.ctx.function is not None and info in returned_functions(
            self.model, info.ctx.function)
        wide = info.class_name is not None or info.ctx is None or info.ctx.function is None or returned
        method = info.class_name is not None
        scan = self._scans.get((name, wide, method, returned))
        if scan is None:
            models = [self.model] + (self._importers() if wide else [])
            if method:
                # An instance may be handed to a module that never imports this one: a method
                # runs from where the entry script's objects meet (`self.processor.convert(...)`).
                models += [m for m in self._siblings() if m not in models]
                # A base class of another module calls the override through `self` (its
                # template method's loop runs `self.forward_backward(data)`).
                models += [m for m in self._base_modules(info.class_name) if m not in models]
                # A factory that builds classes by name (`create_model(opt)` over the modules its
                # package loads by name): its instances' methods run where the factory is used.
                models += [m for m in self._through_loaders() if m not in models]
                # A class a config file names by dotted path: its instances are used where the
                # project builds config targets (`instantiate_from_config(config.model)`).
                models += [m for m in self._config_target_users() if m not in models]
                # A subclass of another module inherits the method: its instances are called
                # where that module is imported (`model = VQANet()` then `model(x, y)` in
                # `train.py`, running the base `Module.forward` that dispatches to
                # `train_forward`).
                models += [m for m in self._subclass_importers(info.class_name) if m not in models]
            sites = [(m, site) for m in models for site in m.calls.candidates(name)]
            if returned:
                # Called under the name its factory's result is bound to (`train_step_fn(...)`).
                seen = {id(site) for _, site in sites}
                sites += [(m, site) for m in models for site in m.calls.result_calls() if id(site) not in seen]
            scan = self._scans[(name, wide, method, returned)] = _CallerScan(self.model, sites)
        try:
            found = scan.callers_of(info)
        except BaseException:
            # Stopped half way (a budget ran out): a later question starts again. A question
            # nested in this one may have dropped the scan already.
            self._scans.pop((name, wide, method, returned), None)
            raise
        called_back = [c for c in self._called_back_from(info) if c not in found]
        return found + called_back if called_back else found

    def _called_back_from(self, info: FunctionInfo) -> List[Caller]:
        """The calls of a parameter in the functions this file hands ``info`` to by name
        (`trainer.train(get_loss, path)`, then `loss = get_loss(model, batch)` in the loop of
        `Trainer.train`): they run it."""
        out: List[Caller] = []
        handed = [(self.model, site, arg) for site, arg in handed_sites(self.model).get(id(info), ())]
        # Handed on by another module of the project that imports it (an experiment script
        # passing `loss_fn=loss_functions.wave_pml` to the shared `training.train`).
        handed += [(other, site, arg) for other in self._importers() for site, arg in handed_imports(other).get(id(info), ())]
        for model, site, arg in handed:
            for owner, target in model.calls.targets(site):
                if target is info:
                    continue  # handed to be run where it is defined (`_handed`)
                param = _parameter_for(target, site.node, arg)
                if param is None:
                    continue
                for inner in target.sites:
                    if type(inner.node.func) is cst.Name and inner.node.func.value == param and (owner, inner) not in out:
                        out.append((owner, inner))
        return out

    def constructions(self, info: FunctionInfo, through_subclasses: bool = False) -> List[Caller]:
        """For a class's `__init__`: the calls that build an instance (`ComputeLoss(model)`), in
        this file and the project files that import it. None are returned when the class may be
        built where the analysis cannot see: a subclass, or the class used other than by calling
        its name. With ``through_subclasses`` (what the arguments may be, not where instances
        are made), a subclass's own `super().__init__(...)` counts as a call that builds it."""
        name = info.class_name
        owner = self.model.facts.classes.get(name or "")
        if owner is None or info.node.name.value != "__init__" or info.ctx is None or info.ctx.function is not None:
            return []
        models = [self.model] + self._importers()
        if not through_subclasses:
            if any(last_segment(b) == name for m in models for c in m.facts.classes.values() for b in c.bases):
                return []
        out: List[Caller] = []
        for model in models if through_subclasses else ():
            for sub in model.facts.classes.values():
                if sub is owner or not any(last_segment(b) == name for b in sub.bases):
                    continue
                if _other_base(model, sub, name, owner):
                    continue  # `class Trainer(nerf.utils.Trainer)` seen from another `Trainer`
                # A subclass builds this class through its own `super().__init__(...)`: that call
                # passes what the class gets (a parameter of the subclass's own `__init__` is
                # followed to where the subclass is built). A subclass without one, or whose base
                # is not surely this class, may pass anything.
                handed = self._super_init_call(model, sub, owner)
                if handed is None:
                    return []
                out.append((model, handed))
        for model in models:
            for site in model.calls.candidates(name):
                if model is self.model and site.qualname is None and type(site.node.func) is cst.Name:
                    if site.node.func.value == name and model.bindings.function(name, site.ctx, site.order) is None:
                        out.append((model, site))
                        continue
                symbol = model.symbol(site.qualname) if site.qualname is not None else None
                if symbol is None and model is not self.model and type(site.node.func) is cst.Name and site.node.func.value == name:
                    symbol = model.calls.star_symbol(name, site)  # `from utils import *`, then `Trainer(...)`
                if symbol is not None and symbol.kind == "class" and symbol.info is owner:
                    out.append((model, site))
                elif symbol is not None and symbol.kind == "class":
                    continue  # another class of that name, surely (a subclass that kept the name)
                elif model is self.model or symbol is not None:
                    return []  # `obj.ComputeLoss(...)`, another class of that name: not sure
        return out

    def _base_method(self, info: ClassInfo, name: str) -> Optional[Target]:
        """The method ``name`` as the first base class that has it defines it (what `super()`
        finds for a class with one line of bases)."""
        model = self.model
        for base in info.bases:
            local = model.facts.classes.get(base)
            if local is not None and local is not info:
                hit = class_method(model, local, name)
            else:
                symbol = model.symbol(base)
                hit = class_method(symbol.model, symbol.info, name) if symbol is not None and symbol.kind == "class" else None
            if hit is not None:
                return hit
        return None

    @staticmethod
    def _super_init_call(model, sub, owner) -> Optional[CallSite]:
        """The one `super().__init__(...)` call of ``sub``'s own `__init__`, when ``sub``
        derives from the class ``owner`` (resolved through the imports); None otherwise."""
        bases = [model.symbol(b) if "." in b else None for b in sub.bases]
        local = [model.facts.classes.get(b) for b in sub.bases]
        if not any((s is not None and s.kind == "class" and s.info is owner) or c is owner for s, c in zip(bases, local)):
            return None
        init = model.facts.functions.get(f"{sub.name}.__init__")
        if init is None:
            return None
        found = [site for site in init.sites if _super_init(site.node)]
        return found[0] if len(found) == 1 and found[0].ctx.loop is None else None

    def _autograd_function(self, site: CallSite) -> Optional[List[Target]]:
        """`Rosa.apply(x)` of a project subclass of `torch.autograd.Function`: its `forward` runs
        now and its `backward` when the loss is backpropagated, both once per call."""
        model = self.model
        name = dotted_name(site.receiver)
        if name is None:
            return None
        owner, info = model, model.facts.classes.get(name)
        if info is None:
            qual = model.imports.qualify(site.receiver)
            symbol = model.symbol(qual) if qual is not None else None
            if symbol is None or symbol.kind != "class":
                return None
            owner, info = symbol.model, symbol.info
        if not any(base in _AUTOGRAD_FUNCTIONS for base in info.bases):
            return None
        found = [class_method(owner, info, method) for method in ("forward", "backward")]
        return [hit for hit in found if hit is not None]

    def _function_aliases(self) -> Dict[str, Set[str]]:
        """Plain names bound to another plain name, to either arm of a conditional expression of
        names, or to a keyword `functools.partial` of one: the names each may stand for. One
        pass over the file's assignments."""
        out: Dict[str, Set[str]] = {}
        for (_, target), bound in self.model.facts.assignments.items():
            # `self.loss_fn = _focal_loss`: an attribute that holds a function (`_attribute_functions`).
            if "." in target and not (target.startswith("self.") and target.count(".") == 1):
                continue
            for assignment in bound:
                value = assignment.value
                values = [value.body, value.orelse] if type(value) is cst.IfExp else [value]
                for one in values:
                    one = self._keyword_partial(one)
                    if type(one) is cst.Name and one.value != target and assignment.index is None:
                        out.setdefault(target, set()).add(one.value)
        return out

    def result_calls(self) -> List[CallSite]:
        """The calls of a plain name the file binds to a call's result (`step_fn =
        get_step_fn(...)`, then `step_fn(...)`): where a function a factory returns may run."""
        if self._result_calls is None:
            # Also a name bound to an attribute of `self` (`step_fn = self.train_step_fn`) that
            # the class binds to a call's result (`_through_attributes`).
            stored = {target for (_, target), assignments in self.model.facts.assignments.items()
                      if target.startswith("self.") and any(type(a.value) is cst.Call for a in assignments)}
            bound = {target for (_, target), assignments in self.model.facts.assignments.items()
                     if "." not in target and any(type(a.value) is cst.Call
                                                  or (type(a.value) is cst.Attribute and dotted_name(a.value) in stored)
                                                  for a in assignments)}
            self._result_calls = [site for site in self.model.facts.calls
                                  if type(site.node.func) is cst.Name and site.node.func.value in bound]
        return self._result_calls

    def candidates(self, name: str) -> List[CallSite]:
        """The calls of this file that may run a function named ``name``: those that call that
        name (`name(...)`, `x.name(...)`, `mod.name(...)`), and for `forward`/`__call__` every
        call of a name that may hold a module instance."""
        if self._by_name is None:
            by_name: Dict[str, List[CallSite]] = {}
            instance: List[CallSite] = []
            aliases = self._function_aliases()
            for site in self.model.facts.calls:
                dotted = site.qualname or dotted_name(site.node.func)
                called = dotted.rsplit(".", 1)[-1] if dotted is not None else site.method  # `Options().init(...)`
                if site.ctx.loop is not None and self._loop_functions():
                    # A function handed over in the loop that defines it runs there (`_handed`).
                    handed = {a.value.value for a in site.node.args if type(a.value) is cst.Name and a.keyword is None}
                    for argument in (handed & self._loop_functions()) - {called}:
                        by_name.setdefault(argument, []).append(site)
                if called is None:
                    # `trainers[name](args)`: a call of each function its dispatch dict holds.
                    for held in self.dispatch_values(site.node.func, site.ctx, site.order):
                        by_name.setdefault(held.value, []).append(site)
                    continue
                by_name.setdefault(called, []).append(site)
                if site.qualname is None:
                    instance.append(site)
                applied = _applier(site)
                if applied is not None:
                    by_name.setdefault(applied, []).append(site)
                if type(site.node.func) is cst.Name:
                    # `step(...)` where `step = amp_step if use_amp else plain_step`, or
                    # `embed_fn(...)` where `embed_fn = partial(embed, encoder=encoder)`: a call
                    # of each function the name may hold (`_aliased_functions` decides).
                    for held in aliases.get(called, ()):
                        by_name.setdefault(held, []).append(site)
                elif dotted is not None and dotted.startswith("self.") and dotted.count(".") == 1:
                    for held in aliases.get(dotted, ()):
                        by_name.setdefault(held, []).append(site)
            self._by_name, self._instance_calls = by_name, instance
        if name in _INSTANCE_CALL:
            return self._instance_calls
        return self._by_name.get(name, [])

    def _importers(self) -> List[object]:
        # Also the files that import a package whose `__init__.py` re-exports this module's
        # names (`from model import MattingRefine`): they call what they import as directly.
        project = getattr(self.model, "project", None)
        return project.importers_through_packages(self.model) if project is not None else []

    def _base_modules(self, class_name: Optional[str]) -> List[object]:
        """The project modules that define the bases of this file's class ``class_name``."""
        cls = self.model.facts.classes.get(class_name or "")
        out: List[object] = []
        for base in cls.bases if cls is not None else ():
            if base in self.model.facts.classes:
                continue
            symbol = self.model.symbol(base) if "." in base else None
            if symbol is not None and symbol.kind == "class" and symbol.model is not self.model:
                out.append(symbol.model)
        return out

    def _subclass_importers(self, class_name: Optional[str]) -> List[object]:
        """The files that import a module defining a subclass of ``class_name`` (not this file)."""
        out: List[object] = []
        for owner, _ in self.subclasses_of(class_name or ""):
            if owner is not self.model:
                out.extend(m for m in owner.calls._importers() if m is not self.model and m not in out)
        return out

    def _through_loaders(self) -> List[object]:
        project = getattr(self.model, "project", None)
        return project.through_loaders(self.model) if project is not None else []

    def _config_target_users(self) -> List[object]:
        project = getattr(self.model, "project", None)
        return project.config_target_users(self.model) if project is not None else []

    def _siblings(self) -> List[object]:
        project = getattr(self.model, "project", None)
        return project.siblings(self.model) if project is not None else []


class _CallerScan:
    """The calls that may run a function of a given name, and which function of the file each
    one runs, found once for every function of that name: a name defined N times
    (concatenated scripts) costs N calls' targets, not N times N.

    Finding a call's targets may ask for the callers of another function of the same name (the
    instances a `forward`'s parameter holds come from the calls of `forward`). That question
    sees what a scan of its own would see: the calls already done as they came out, the calls
    in progress further up asked again (their answer is cut where the value model meets a
    question it is already answering), and the rest done now, in order."""

    def __init__(self, model, sites: List[Caller]) -> None:
        self._model = model
        self._sites = sites
        self._next = 0
        self._done: Dict[int, set] = {}  # id(function) -> positions of calls that run it
        self._running: set = set()  # positions of calls whose targets are being found
        self._unasked: List[int] = []  # of those, the ones not yet asked again, in order
        self._cut: Dict[int, set] = {}  # id(function) -> running positions whose cut answer runs it
        self._cut_of: Dict[int, List[int]] = {}
        self._running_depth: Dict[int, int] = {}  # running position -> depth of its open frame
        # Positions whose targets were found while a question further up was still open
        # (open_questions.py): their ids, and, while that question is open, the depth it sits at.
        # The tracker drops a position from `_holding` when the question closes; it is then
        # asked again.
        self._ids_of: Dict[int, List[int]] = {}
        self._holding: Dict[int, int] = {}
        self._retried: set = set()

    def callers_of(self, info: FunctionInfo) -> List[Caller]:
        tracker = open_questions.current()
        if self._running:
            # Asked from inside the scan's own work: the answer is cut where that work is open.
            tracker.lean_on(min(self._running_depth[p] for p in self._running))
        for position in [p for p in self._ids_of if p not in self._holding and p not in self._running]:
            stale = self._ids_of.pop(position, None)
            if stale is None:
                continue  # asked again already, by a question nested in one of these
            for key in stale:
                self._done[key].discard(position)
            self._run(position, tracker)
        if self._holding:
            tracker.lean_on(min(self._holding.values()))
        while self._unasked:
            position = self._unasked[0]
            ids = self._target_ids(position)
            if position in self._unasked:
                self._unasked.remove(position)
            if position in self._running:
                self._forget_cut(position)
                self._cut_of[position] = ids
                for key in ids:
                    self._cut.setdefault(key, set()).add(position)
        while self._next < len(self._sites):
            position = self._next
            self._next += 1
            self._run(position, tracker)
        positions = sorted(self._done.get(id(info), set()) | self._cut.get(id(info), set()))
        return [self._sites[i] for i in positions]

    def _run(self, position: int, tracker) -> None:
        self._running.add(position)
        self._unasked.append(position)
        frame = tracker.lean()
        self._running_depth[position] = frame.depth
        try:
            ids = self._target_ids(position)
        finally:
            self._running.discard(position)
            del self._running_depth[position]
            if position in self._unasked:
                self._unasked.remove(position)
            self._forget_cut(position)
            leaned = tracker.settle(frame)
        if leaned and position not in self._retried:
            # Found with a question further up still open: held until it closes, then asked
            # once more (the second answer is kept: open_questions.py).
            self._retried.add(position)
            self._ids_of[position] = ids
            self._holding[position] = leaned
            tracker.hold_until(self._holding, position, leaned)
        for key in ids:
            self._done.setdefault(key, set()).add(position)

    def _forget_cut(self, position: int) -> None:
        for key in self._cut_of.pop(position, ()):
            self._cut[key].discard(position)

    def _target_ids(self, position: int) -> List[int]:
        model, site = self._sites[position]
        ids: List[int] = []
        for owner, target in model.calls.targets(site):
            if owner is self._model and id(target) not in ids:
                ids.append(id(target))
        return ids


_MODULE_BASES = ("torch.nn.Module", "torch.nn.modules.module.Module", "nn.Module", "Module")


_PIPELINE_LIBRARIES = frozenset({"diffusers", "transformers"})


def _steps_switched_off(model, inner: FunctionInfo, factory: FunctionInfo, call: cst.Call) -> bool:
    """Every place ``inner`` (a function ``factory`` defines and returns) trains (its optimizer
    steps, its backward passes, its calls of functions the factory was handed) sits in an arm of a test of one of the
    factory's parameters (`if train:`) that ``call`` decides against with a literal it passes,
    or leaves to a literal default."""
    if any(a.star for a in call.args):
        return False
    # Where it trains: its own steps, its `backward()` calls, and the calls of stepping
    # functions handed to the factory (an `optimize_fn`). Read from the text: asking the call
    # graph here would ask it about calls whose targets are being found.
    markers = list(inner.step_contexts) + [
        site.ctx for site in inner.sites if site.method in ("backward", "step")
        or (type(site.node.func) is cst.Name and site.node.func.value in factory.params
            and (OPTIMIZER_NAME.search(site.node.func.value) is not None or "step" in site.node.func.value))]
    if not markers:
        return False
    positional = [p.name.value for p in (*factory.node.params.posonly_params, *factory.node.params.params)]
    for ctx in markers:
        decided = False
        current = ctx
        while current is not None and current.function is inner and not decided:
            guard = current.guard
            if guard is not None and guard.ctx.function is inner:
                decided = _decided_against(model, guard, inner, factory, call, positional)
            current = current.outer
        if not decided:
            return False
    return True


def _decided_against(model, guard, inner: FunctionInfo, factory: FunctionInfo, call: cst.Call, positional) -> bool:
    test, holds = guard.test, guard.positive and not guard.exits
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, holds = test.expression, not holds
    if type(test) is not cst.Name or test.value not in factory.params or test.value in inner.params:
        return False
    if model.bindings.reaching(test.value, guard.ctx, guard.order).assignments:
        return False  # rebound in the closure: not the factory's argument
    name = test.value
    position = positional.index(name) - factory.receiver_params if name in positional else None
    arg = _argument(call, name, position if position is not None and position >= 0 else None)
    value = arg.value if arg is not None else next(
        (p.default for p in (*factory.node.params.params, *factory.node.params.kwonly_params)
         if p.name.value == name), None)
    if type(value) is not cst.Name or value.value not in ("True", "False"):
        return False
    return (value.value == "True") != holds


def returned_functions(model, factory: FunctionInfo) -> List[FunctionInfo]:
    """The functions ``factory`` defines in its own body and returns, when every `return` of it
    hands back such a function by name (`def get_loss_fn(...): def loss_fn(...): ...; return
    loss_fn`); empty otherwise."""
    cache = model._shared.setdefault("returned-functions", {})
    known = cache.get(id(factory))
    if known is None:
        known = []
        for ret in factory.return_sites:
            value = ret.value
            inner = model.bindings.function(value.value, ret.ctx, ret.order) if type(value) is cst.Name else None
            if inner is None or inner.ctx is None or inner.ctx.function is not factory:
                known = []
                break
            if inner not in known:
                known.append(inner)
        cache[id(factory)] = known
    return known


def _library_model(base: str) -> bool:
    """A model base class of Hugging Face's libraries, itself an `nn.Module`: transformers'
    `PreTrainedModel` (and its per-architecture bases, `LlamaPreTrainedModel`), diffusers'
    `ModelMixin`."""
    root, _, rest = base.partition(".")
    last = base.rsplit(".", 1)[-1]
    return bool(rest) and ((root == "transformers" and last.endswith("PreTrainedModel")
                            and not last.startswith(("TF", "Flax")))
                           or (root == "diffusers" and last == "ModelMixin"))


def class_kinds(model, info: ClassInfo, depth: int = 0) -> frozenset:
    """What an instance of a class (the file's or the project's) is, in the kinds of
    `model/kinds.py`: a "module" when it derives from torch.nn.Module, a "scaler" when it derives
    from GradScaler or builds one to scale with (a loss-scaling wrapper), a "ddp" wrapper when it
    derives from DataParallel or DDP (`DataParallelWithCallback`, which vendored sync-BatchNorm
    code defines: its state_dict keys start with `module.` just the same), and "data_parallel"
    as well when it derives from DataParallel."""
    cache = model._shared.setdefault("class-kinds", {})
    known = cache.get(id(info))
    if known is not None:
        return known
    cache[id(info)] = frozenset()  # a class hierarchy that loops back on itself
    kinds = set()
    for base in info.bases:
        if base in _MODULE_BASES or base.endswith(".nn.Module") or _library_model(base):
            kinds.add("module")
        elif base.rsplit(".", 1)[-1] == "GradScaler":
            kinds.add("scaler")
        elif base.split(".", 1)[0] in _PIPELINE_LIBRARIES and base.endswith("Pipeline"):
            # `class MarigoldPipeline(DiffusionPipeline)`: several models behind one call, with
            # no train or eval mode of its own.
            kinds.add("pipeline")
        elif base in DDP_WRAPPERS:
            kinds.update(("module", "ddp", "data_parallel") if base == DATA_PARALLEL else ("module", "ddp"))
        elif depth < 4:
            local = model.facts.classes.get(base)
            if local is not None and local is not info:
                kinds |= class_kinds(model, local, depth + 1)
            else:
                symbol = model.symbol(base)
                if symbol is not None and symbol.kind == "class":
                    kinds |= class_kinds(symbol.model, symbol.info, depth + 1)
    if any(s.ctx.class_scope == info.scope for s in model.facts.calls_by_qualname.get("torch.amp.GradScaler", ())):
        kinds.add("scaler")
    if "ddp" in kinds and _defines(info, "state_dict"):
        kinds.discard("ddp")  # a wrapper that writes its own state_dict (keys without `module.`)
    cache[id(info)] = frozenset(kinds)
    return cache[id(info)]


def constructed_kinds(model, call: cst.Call) -> frozenset:
    """``class_kinds`` of the project class a call constructs (`BalancedDataParallel(...)`,
    imported or defined in the file); empty for anything else."""
    func = call.func
    qual = model.imports.qualify(func)
    if qual is not None:
        symbol = model.symbol(qual)
        if symbol is not None and symbol.kind == "class":
            return class_kinds(symbol.model, symbol.info)
        return frozenset()
    if type(func) is cst.Name and func.value in model.facts.classes:
        return class_kinds(model, model.facts.classes[func.value])
    return frozenset()


def _defines(info: ClassInfo, name: str) -> bool:
    """Whether the class body defines a method ``name``."""
    return any(type(statement) is cst.FunctionDef and statement.name.value == name
               for statement in info.node.body.body)


def _super_call(node: Optional[cst.BaseExpression]) -> bool:
    """`super()` or `super(Cls, self)`."""
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "super"


def _super_init(call: cst.Call) -> bool:
    """`super().__init__(...)` or `super(Cls, self).__init__(...)`."""
    func = call.func
    return (
        type(func) is cst.Attribute
        and func.attr.value == "__init__"
        and type(func.value) is cst.Call
        and type(func.value.func) is cst.Name
        and func.value.func.value == "super"
    )


def _other_base(model, sub, name: str, owner) -> bool:
    """Every base of ``sub`` named ``name`` is a project class other than ``owner``."""
    found = False
    for base in sub.bases:
        if last_segment(base) != name:
            continue
        symbol = model.symbol(base) if "." in base else None
        local = model.facts.classes.get(base)
        if local is owner or (symbol is not None and symbol.kind == "class" and symbol.info is owner):
            return False
        if local is None and (symbol is None or symbol.kind != "class"):
            return False  # not resolved: it may be ``owner``
        found = True
    return found


def _argument(call: cst.Call, keyword: str, position: Optional[int]) -> Optional[cst.Arg]:
    """The argument a call passes for a parameter, by keyword or position (no `*spread` before)."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star:
            return None
        else:
            if position is not None and positional == position:
                return arg
            positional += 1
    return None


def _positional(info: FunctionInfo) -> List[str]:
    params = info.node.params
    return [p.name.value for p in (*params.posonly_params, *params.params)]


def _position(info: FunctionInfo, name: str) -> Optional[int]:
    """Where a call passes parameter ``name`` by position (the receiver left out); None for a
    keyword-only parameter."""
    positional = _positional(info)
    return positional.index(name) - info.receiver_params if name in positional else None


def _parameter_for(target: FunctionInfo, call: cst.Call, arg: cst.Arg) -> Optional[str]:
    """The parameter of ``target`` that ``arg`` of ``call`` binds."""
    if arg.keyword is not None:
        return arg.keyword.value if arg.keyword.value in target.params else None
    position = 0
    for other in call.args:
        if other.keyword is not None:
            continue
        if other.star:
            return None
        if other is arg:
            positional = _positional(target)
            index = position + target.receiver_params
            return positional[index] if index < len(positional) else None
        position += 1
    return None


def _distinct(targets: List[Target]) -> List[Target]:
    out: List[Target] = []
    for target in targets:
        if not any(target[0] is o and target[1] is i for o, i in out):
            out.append(target)
    return out
