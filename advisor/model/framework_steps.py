"""Functions a training framework runs once per training step, though no loop of the file
calls them: a LightningModule's `training_step`, a Hugging Face `Trainer` subclass's
`compute_loss`, the process function an Ignite `Engine` is built with. The loop lives in the
framework, so the file shows no loop; what such a function does, it does on every step.
"""

from __future__ import annotations

import os
import re

from typing import Callable, Iterator, List, Optional, Set, Tuple

import libcst as cst

from advisor.model.facts import Context, FunctionInfo, bound_element
from advisor.model.guards import conjuncts
from advisor.model.handed_names import calls_handing
from advisor.model.literals import literal_values
from advisor.model.module_layers import class_parameter_free
from advisor.model.names import dotted_name
from advisor.model.target_arms import no_target_arm
from advisor.model.instances import INSTANCES
from advisor.model.value_flow import argument, parameter_default
from advisor.project.layout import vendored
from advisor.model.vocabulary import ENGINES, FRAMEWORK_STEP_METHODS, FRAMEWORK_STEP_PACKAGES, LIGHTNING_TRAINER_TEXT


def is_framework_step(model, info: FunctionInfo) -> bool:
    if info.no_grad:
        return False
    if info.class_name is not None:
        return _step_method(model, info)
    return id(info) in _engine_functions(model)


def _step_method(model, info: FunctionInfo) -> bool:
    name = info.node.name.value
    if name not in _STEP_METHOD_NAMES:
        return False  # no framework calls it per step: no base needs following
    cls = model.facts.classes.get(info.class_name or "")
    if cls is None:
        return False
    bases = _framework_bases(model, cls, name, 0)
    if not bases:
        return False
    if all(base in ("LightningModule", "Callback") for base in bases):
        if not lightning_runs(model):
            return False
        return "Callback" in bases or lightning_fitted(model, cls)
    return True


def lightning_fitted(model, cls) -> bool:
    """Some `Trainer.fit(...)` of the project may train the LightningModule ``cls``: a project
    that keeps a second model version only for prediction (`trainer.predict(ModelV2...)`, its
    training script fitting `ModelV1`) never runs the other's `training_step`. Each file that
    calls `.fit(` is asked what it fits: classes it builds itself (`trainer.fit(Boltz1(...))`)
    decide; a module read from what a config loader built (`cfg = instantiate(raw)`, then
    `cfg.model`) is a class some config file names; anything else (a model handed in, built by
    another module's factory or picked with `getattr`) may be any,
    and so is every class where the project runs `LightningCLI` or calls no `.fit(` at all (a
    library whose users fit its modules)."""
    project = model.project
    if project is None or model.real_path is None:
        return True
    answers = model.shared("lightning-fitted", lambda m: {})
    if cls.name not in answers:
        answers[cls.name] = _fitted(model, project, cls)
    return answers[cls.name]


def _fitted(model, project, cls) -> bool:
    fitting = project.fitting_files()
    if not fitting or project.files_containing("LightningCLI"):
        return True
    names = _with_subclasses(model, cls.name)
    for path in fitting:
        owner = project.model(path)
        if owner is None:
            return True
        for site in owner.method_calls("fit"):
            fitted = _fitted_classes(owner, site)
            if fitted is _ANY:
                return True
            if fitted is None:
                if any(project.named_in_project_configs(name) for name in names):
                    return True  # a module built from a config: one a config file names
            elif names & fitted:
                return True
    return False


# A `.fit` whose module may be of any class (one a factory of another module builds).
_ANY = frozenset({"*"})


def _fitted_classes(owner, site) -> Optional[frozenset]:
    """The names of the classes (and their bases) a `.fit(module, ...)` call hands over, when
    the file builds them itself; `_ANY` when another module's code builds them; None when the
    value model cannot tell (a module read from a config object, handed in)."""
    call = site.node
    arg = argument(call, "model", 0)
    if arg is None or arg.star:
        return _ANY
    found, known = owner.values.ask(INSTANCES, arg.value, site.ctx, site.order)
    if not known or not found:
        # Only a module read from what a config loader built (`cfg = instantiate(raw)`, then
        # `trainer.fit(cfg.model)`) is one a config file names; anything else may be any.
        return None if _from_config_loader(owner, arg.value, site.ctx, site.order, 0) else _ANY
    words = set(re.findall(r"\w+", owner.text or ""))
    out: Set[str] = set()
    for where, info in found:
        if info.name not in words:
            return _ANY  # built by a factory elsewhere: its module decides, and may change
        out.update(_ancestors(where, info, 0))
    return frozenset(out)


# Calls that build what a config names (Hydra's `instantiate`, latent-diffusion's
# `instantiate_from_config`).
_CONFIG_LOADERS = frozenset({"instantiate", "instantiate_from_config"})


def _from_config_loader(model, expr: cst.BaseExpression, ctx, order: float, depth: int) -> bool:
    """Some binding on the way to ``expr`` (through the names it is read from, three bindings
    deep) holds a config loader's call: `model = cfg.model` after `cfg = instantiate(raw)`."""
    if depth > 3:
        return False
    stack = [expr]
    names = []
    while stack:
        node = stack.pop()
        if type(node) is cst.Call and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in _CONFIG_LOADERS:
            return True
        if type(node) is cst.Name:
            names.append(node.value)
        elif type(node) in (cst.Attribute, cst.Subscript):
            stack.append(node.value)
        elif type(node) is cst.Call:
            stack.extend(a.value for a in node.args)
    for name in names:
        for binding in model.bindings.reaching(name, ctx, order).assignments:
            if binding.value is not None and _from_config_loader(model, binding.value, binding.ctx, binding.order, depth + 1):
                return True
    return False


def _ancestors(model, info, depth: int) -> Set[str]:
    out = {info.name}
    if depth > 3:
        return out
    for base in info.bases:
        out.add(base.rsplit(".", 1)[-1])
        local = model.facts.classes.get(base)
        if local is not None and local is not info:
            out |= _ancestors(model, local, depth + 1)
        elif "." in base or local is None:
            symbol = model.symbol(base)
            if symbol is not None and symbol.kind == "class" and symbol.info is not info:
                out |= _ancestors(symbol.model, symbol.info, depth + 1)
    return out


def _with_subclasses(model, name: str) -> Set[str]:
    names, frontier = {name}, [name]
    for _ in range(3):
        frontier = [info.name for base in frontier for _, info in model.calls.subclasses_of(base)
                    if info.name not in names]
        names.update(frontier)
    return names


_STEP_METHOD_NAMES = frozenset().union(*FRAMEWORK_STEP_METHODS.values())


def _framework_bases(model, cls, name: str, depth: int) -> List[str]:
    """The framework classes among ``cls``'s bases, or the bases of its bases in the file or in
    another module of the project (`class CustomAMPTrainer(CustomSimpleTrainer)`, itself a
    detectron2 `SimpleTrainer`), that call the method ``name`` once per step; a framework base
    counts in a module that imports the framework."""
    return framework_bases(model, cls, lambda last: name in FRAMEWORK_STEP_METHODS.get(last, ()), depth)


def framework_bases(model, cls, wanted: Callable[[str], bool], depth: int = 0) -> List[str]:
    """The framework classes among ``cls``'s bases, or the bases of its project bases up to
    three levels (in the file, or another module's: `class LitDVGO(LitModel)` with
    `LitModel(pl.LightningModule)` in the project's `interface.py`), whose last name ``wanted``
    accepts, in a module that imports a framework."""
    found: List[str] = []
    for base in cls.bases:
        last = base.rsplit(".", 1)[-1]
        if wanted(last):
            if model.uses_framework(*FRAMEWORK_STEP_PACKAGES):
                found.append(last)
        elif depth < 3:
            local = model.facts.classes.get(base)
            if local is not None and local is not cls:
                found.extend(framework_bases(model, local, wanted, depth + 1))
            elif local is None and "." in base:
                symbol = model.symbol(base)
                if symbol is not None and symbol.kind == "class" and symbol.info is not cls:
                    found.extend(framework_bases(symbol.model, symbol.info, wanted, depth + 1))
    return found


def lightning_runs(model) -> bool:
    """Some file of the project near this one runs a Lightning `Trainer` (or `LightningCLI`):
    a LightningModule copied into a project that never trains it with Lightning (a vendored
    latent-diffusion beside a NeRF trainer) has hooks nothing calls."""
    project = model.project
    if project is None or model.real_path is None:
        return True
    return model.shared("lightning-runs", lambda m: _runs_trainer(m, project))


def _runs_trainer(model, project) -> bool:
    if LIGHTNING_TRAINER_TEXT.search(model.text or "") and "lightning" in (model.text or ""):
        return True
    return bool(nearby_lightning_trainers(model))


def nearby_lightning_trainers(model) -> List[str]:
    """The files near this one (its dependencies, which take in every file that runs a Lightning
    `Trainer` when this one defines a training-data hook) that run one."""
    project = model.project
    if project is None or model.real_path is None:
        return []
    nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(model.real_path)}
    return [path for path in project.lightning_trainers() if os.path.normpath(os.path.abspath(path)) in nearby]


def _engine_functions(model) -> Set[int]:
    """The functions the file builds an engine with, when they train: an evaluator's step
    runs every iteration too, but of an evaluation, not of training."""
    def compute(model) -> Set[int]:
        out: Set[int] = set()
        for site in model.calls_to(*ENGINES):
            args = site.node.args
            arg = next((a for a in args if a.keyword is not None and a.keyword.value == "process_function"), None)
            if arg is None and args and args[0].keyword is None and not args[0].star:
                arg = args[0]
            if arg is None or not type(arg.value) is cst.Name:
                continue
            info = model.bindings.function(arg.value.value, site.ctx, site.order)
            if info is not None and model.trains(info):
                out.add(id(info))
        return out

    return model.shared("engine-step-functions", compute)


def runs_per_batch(model, info: FunctionInfo, depth: int = 0) -> bool:
    """A module's `forward` (of an `nn.Module` subclass of the file), or a function of the
    project that such code calls (up to three calls down): it runs on every batch the module sees, in
    training and evaluation alike, however the module is built (from a registry, a config
    name). GPU106's question: building a tensor costs the same whoever runs the module. The
    host syncs ask `forward_path`, which weighs how the module is used."""
    if depth > 3:
        return False
    cls = model.facts.classes.get(info.class_name) if info.class_name is not None else None
    plain = cls is not None and not cls.bases  # `class RolloutEncoder():`, which a module holds
    if info.class_name is not None and info.node.name.value == "forward" and not plain:
        # Through the file's own bases only in a project's own scripts' code: in a library (a
        # distribution others install, or a copy of one in a folder with its own licence) a
        # model family's forward serves modes a config picks (peft's prompt-learning arm after
        # `if not isinstance(config, PromptLearningConfig): return ...`), and which one the
        # runs ask for is not seen.
        return (_module_forward(model, info, own_bases=not _library_code(model))
                and not instances_only_used_through_methods(model, info))
    if info.class_name is not None and _method_entry(model, info):
        return True  # `gen.encode(x)` where the module is only ever used through its methods
    # Callers in other project files count too: `timestep_embedding` of a `nn.py` helper
    # module runs in every forward of the UNet that `unet.py` defines.
    # Not through the arm of a parameter test that training calls never take (the sampler a
    # `forward(x, infer=False)` runs only for inference requests).
    return any(
        site.ctx.function is not None and site.ctx.function is not info
        and runs_per_batch(owner, site.ctx.function, depth + 1)
        and not branch_untaken(owner, site.ctx, site.ctx.function)
        for owner, site in model.callers(info)
    )


def _registered(node: cst.ClassDef) -> bool:
    """`@REGISTRY.register()`, `@register_model`, `@registry.register("name")` above the class."""
    for decorator in node.decorators:
        target = decorator.decorator
        if type(target) is cst.Call:
            target = target.func
        name = dotted_name(target) or ""
        if "register" in name.rsplit(".", 1)[-1].lower():
            return True
    return False


# Parameters a model's forward takes to compute its own loss (`model(x, labels=y)` in training).
_TARGET_PARAMETERS = frozenset({"labels", "label", "targets", "target"})
# The same with a qualifier: `targets_batch`, `gt_labels`, `target_masks`.
_TARGET_PARAMETER = re.compile(r"(^|_)(labels?|targets?)(_|$)")


def forward_path(model, ctx: Context) -> Optional[bool]:
    """Whether code runs once per batch because it is in the forward path of a module the call
    graph does not see trained (built from a registry, a config name, a package re-export,
    handed to a Trainer or a pipeline engine): the `forward` of an `nn.Module` (or Hugging Face
    model) subclass that no call of the project (tests aside) is seen to run, or that some call
    runs with gradients on, or a function of the project such a forward calls, up to three
    calls down, through calls made with gradients on. None when it is not; True when the module is
    evidently a training model (its class holds parameters and is put in a registry, or that forward computes a loss
    or takes the targets) and a GPU may be used (in this file or the forward's), False when the
    evidence is weak (a layer, or a class the project builds by name that no call is seen to
    run: info). Code under
    `no_grad`, under `if not self.training`, or in a function only reached from such places
    (`generate()`), is not on the path."""
    info = ctx.function
    if info is None or ctx.no_grad or inference_branch(ctx) or branch_untaken(model, ctx, info):
        return None
    answers = model.shared("forward-path", lambda m: {})
    if id(info) not in answers:
        strong: Optional[bool] = None
        for owner, root, gated in _forward_roots(model, info, 0, set(), False):
            # A model module may not name the device: the script that builds the model does.
            # Reached only through a guarded call (`if self.immiscible: self.assign(...)`, a
            # flag nothing turns on): weak evidence, as for a layer.
            strong = (_training_forward(owner, root) and (model.may_use_gpu or owner.may_use_gpu)
                      and not _built_never_called(owner, root) and not gated)
            if strong:
                break
        answers[id(info)] = strong
    return answers[id(info)]


def instances_only_used_through_methods(model, info: FunctionInfo) -> bool:
    """Every instance of the forward's class that the project builds is bound to a name and
    used only through its other methods (`self.gen_a = VAEGen(...)`, then `self.gen_a.encode(x)`
    and `self.gen_a.decode(h)`): nothing calls the module itself, so its `forward` never runs.
    False when some instance is called, handed on (to `DataParallel`, a list, a function) or
    built where the analysis cannot follow it."""
    known = model.shared("instances-through-methods", lambda m: {})
    name = info.class_name or ""
    if name not in known:
        known[name] = _only_through_methods(model, name)
    return known[name]


def _only_through_methods(model, name: str) -> bool:
    init = model.facts.functions.get(f"{name}.__init__")
    if init is None:
        return False
    built = model.calls.constructions(init)
    if not built or _built_by_name(model, name):
        return False
    for owner, site in built:
        target = site.assigned_to
        if target is None or site.outer is not None:
            return False
        called, handed = owner.shared("instance-uses", _instance_uses)
        if target in called or f"{target}.forward" in called or target in handed:
            return False  # `self.gen_a(x)`, `self.gen_a.forward(x)`; `nn.DataParallel(self.gen_a)`, `gen = self.gen_a`
    return True


# Code that may build a class it names from a string: `globals()[model_name](**args)`, a bare
# `eval(...)` (not `model.eval()`), `getattr(models, args.arch)(...)` called with a name that is
# no literal.
_BUILDS_BY_NAME = re.compile(
    r"\b(?:globals|locals|vars)\(\s*\)\s*\[|(?<![.\w])eval\(|\bgetattr\(\s*[\w.]+\s*,\s*[^'\"()\s,][^()]*\)\s*\(")


def _built_by_name(model, name: str) -> bool:
    """A project file that names the class may build it from a string the call graph cannot
    follow (`model = globals()[model_name](**args)` in a package's `load_model`): its instances
    there may be called as modules."""
    project = model.project
    if project is None or model.real_path is None:
        return False
    return any(path.endswith(".py") and _BUILDS_BY_NAME.search(project.text_of(path))
               for path in project.files_naming(name))


def _instance_uses(model):
    """(dotted names called, dotted names handed on as an argument or bound to another name)."""
    called, handed = set(), set()
    for call in model.facts.calls:
        name = dotted_name(call.node.func)
        if name is not None:
            called.add(name)
        for arg in call.node.args:
            name = dotted_name(arg.value)
            if name is not None:
                handed.add(name)
    for found in model.facts.assignments.values():
        for assignment in found:
            name = dotted_name(assignment.value) if assignment.value is not None else None
            if name is not None:
                handed.add(name)
    for info in model.facts.functions.values():
        for returned in info.return_sites:
            # `return model` from a factory: its callers use the instance.
            name = dotted_name(returned.value) if returned.value is not None else None
            if name is not None:
                handed.add(name)
    return called, handed


def _method_entry(model, info: FunctionInfo) -> bool:
    """A method of an `nn.Module` class whose instances are used only through their methods, and
    called that way (`self.gen_a.encode(x)`): it stands where `forward` would, once per batch."""
    cls = model.facts.classes.get(info.class_name or "")
    forward = model.facts.functions.get(f"{info.class_name}.forward")
    if cls is None or forward is None or not any(b.startswith("torch.nn.") or b.endswith("Module") for b in cls.bases):
        return False
    if not instances_only_used_through_methods(model, forward):
        return False
    init = model.facts.functions.get(f"{info.class_name}.__init__")
    name = info.node.name.value
    for owner, site in model.calls.constructions(init):
        if f"{site.assigned_to}.{name}" in owner.shared("instance-uses", _instance_uses)[0]:
            return True
    return False


def _runs_its_own_loop(model, info: FunctionInfo) -> bool:
    """A `forward` that holds a training loop (a trainer written as an `nn.Module`, run once by
    `trainer()`): it is not called per batch; its loop is, and that loop's own heat says so."""
    return any(model.is_training_loop(loop) for loop in info.loops)


def _forward_roots(model, info: FunctionInfo, depth: int, seen: Set[Tuple[int, bool]],
                   gated: bool) -> Iterator[Tuple[object, FunctionInfo, bool]]:
    """(file, forward, whether the way down to ``info`` passes a guarded call) for the module
    forwards that run ``info``."""
    # A function reached through a guarded call first may still be reached through an open one.
    if depth > 3 or (id(info), gated) in seen:
        return
    seen.add((id(info), gated))
    # Calls from tests do not say how the module is used; calls under no_grad, under
    # `if not self.training`, or from a no_grad function (`generate()`) are inference.
    callers, live = _live_callers(model, info)
    if (_module_forward(model, info) and not info.no_grad and (live or (not callers and not model.in_untrained_copy
                                                                      and not _project_trains_nowhere(model)))
            and not _runs_its_own_loop(model, info) and not instances_only_used_through_methods(model, info)
            and not _returns_a_number(info)):
        yield model, info, gated  # a caller the call graph sees may still say more (a loss)
    for owner, site in live:
        caller = site.ctx.function
        if caller is not None and caller is not info and not branch_untaken(owner, site.ctx, caller):
            yield from _forward_roots(owner, caller, depth + 1, seen, gated or owner.guards.gated(site.ctx))


def _project_trains_nowhere(model) -> bool:
    """No file of the project trains (`ProjectView.trains_nowhere`), or none of the top-level
    folder the file sits in, which nothing outside imports (`folder_trains_nowhere`): a forward
    no call of the project reaches is not run by a training loop out of sight either."""
    project = model.project
    return project is not None and model.real_path is not None and (
        project.trains_nowhere() or project.folder_trains_nowhere(model.real_path))


def _deciding_callers(model, info: FunctionInfo):
    """The live calls of ``info`` that run in training (some heat), or every live call when none
    does: which arm of a parameter test a training step takes is for those calls to say."""
    found = model.shared("deciding-callers", lambda m: {})
    key = id(info)
    if key not in found:
        live = _live_callers(model, info)[1]
        found[key] = live  # a chain of calls that comes back here sees every live call
        hot = [(owner, site) for owner, site in live if owner.heat(site.ctx) is not None]
        chosen = hot or live
        # A call in an arm its own function's training calls never take (the `else` of `if
        # mel_targets is not None:` in a forward that training calls with targets) says
        # nothing about a training step.
        taken = [(owner, site) for owner, site in chosen
                 if site.ctx.function is None or site.ctx.function is info
                 or not branch_untaken(owner, site.ctx, site.ctx.function)]
        found[key] = taken or chosen
    return found[key]


def _live_callers(model, info: FunctionInfo):
    """(the calls of ``info`` outside tests, those of them made with gradients on)."""
    found = model.shared("forward-callers", lambda m: {})
    if id(info) not in found:
        # Calls from tests do not say how the module is used; calls under no_grad, under
        # `if not self.training`, or from a no_grad function (`generate()`) are inference.
        callers = [(owner, site) for owner, site in model.callers(info)
                   if not owner.is_test_code and not model.left_out_caller(owner)]
        live = [
            (owner, site) for owner, site in callers
            if not (site.ctx.no_grad or inference_branch(site.ctx)
                    or (site.ctx.function is not None and site.ctx.function.no_grad))
        ]
        found[id(info)] = (callers, live)
    return found[id(info)]


_UNDECIDED = object()


def branch_untaken(model, ctx: Context, info: FunctionInfo) -> bool:
    """Code of ``info`` under a test of one of its parameters that every call made with
    gradients on decides against, by a literal it passes or leaves to a literal default: the
    `else` of `if train:` when training calls `model(x, y, train=True)`, or the branch of
    `if mode == "rank":` they never ask for. Evaluation code kept in a training forward.
    Only the calls that run in training decide, when some do: an inference entry point that
    asks for the other arm with gradients on (a GUI's `model(x, infer=True)`) runs it, but not
    on a training step."""
    live = _deciding_callers(model, info)
    if not live:
        return _runner_default_untaken(model, ctx, info)
    current: Optional[Context] = ctx
    while current is not None and current.function is info:
        guard = current.guard
        if guard is not None and guard.ctx.function is info:
            decided = [_decides(model, guard, info, owner, site) for owner, site in live]
            if all(d is not None and d != guard.positive for d in decided):
                return True
        current = current.outer
    return False


def _runner_default_untaken(model, ctx: Context, info: FunctionInfo) -> bool:
    """The test arm of an OpenMMLab model's `forward(self, ..., return_loss=True)`, which no call
    of the project runs: the library's training step calls the model with its batch only, so
    `return_loss` keeps its default there (its test loops pass `return_loss=False`)."""
    if "return_loss" not in info.params or info.node.name.value != "forward" or model.callers(info):
        return False
    default = parameter_default(info, "return_loss")
    if type(default) is not cst.Name or default.value not in ("True", "False"):
        return False
    current: Optional[Context] = ctx
    while current is not None and current.function is info:
        guard = current.guard
        if guard is not None and guard.ctx.function is info:
            test, negated = guard.test, False
            while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                test, negated = test.expression, not negated
            if type(test) is cst.Name and test.value == "return_loss":
                holds = (default.value == "True") != negated
                if holds != guard.positive:
                    return True
        current = current.outer
    return False


def untaken_by(model, ctx: Context, info: FunctionInfo, site, owner=None) -> bool:
    """The call ``site`` of ``info`` never runs the code at ``ctx``: a guard of a parameter on the
    way decides against it for the literal that call passes (`save_checkpoint(best=True)` never
    runs the `if not best:` arm; with ``owner``, the caller's model, also a constant the caller
    holds in a name or hands on from its own callers)."""
    current: Optional[Context] = ctx
    while current is not None and current.function is info:
        guard = current.guard
        if guard is not None and guard.ctx.function is info:
            decided = _decides(model, guard, info, owner, site)
            if decided is not None and decided != guard.positive:
                return True
        current = current.outer
    return False


def _decides(model, guard, info: FunctionInfo, owner, site) -> Optional[bool]:
    """The value a parameter test (`train`, `not train`, `mode == "rank"`) takes for one call."""
    test, negated = guard.test, False
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, negated = test.expression, not negated
    literal = _UNDECIDED
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        part = test.comparisons[0]
        none_test = (type(part.operator) in (cst.Equal, cst.NotEqual)
                     and type(part.comparator) is cst.Name and part.comparator.value == "None")
        if type(part.operator) in (cst.Equal, cst.NotEqual) and not none_test:
            literal = _literal_value(part.comparator)
            if literal is not _UNDECIDED:
                negated ^= type(part.operator) is cst.NotEqual
            test = test.left
        elif (type(part.operator) in (cst.Is, cst.IsNot) and _is_singleton(part.comparator)) or none_test:
            # `if resp_list is None:`, `if keep_dims is False:`: by identity, so a passed
            # 'return_mask' is not False, and a list the call builds is not None (`max_len ==
            # None` too: only None equals None).
            negated ^= type(part.operator) in (cst.IsNot, cst.NotEqual)
            if type(test.left) is not cst.Name:
                return None
            value = _passed(model, guard, info, test.left.value, site, owner, singleton=True)
            if value is _UNDECIDED:
                return None
            return (value is _literal_value(part.comparator)) != negated
    if type(test) is cst.Subscript and literal is not _UNDECIDED:
        # `if event["name"] == "get_cam":` of a handler every call hands a dict display
        # (`model.event({"name": "minibatch", ...})`): the entry that call writes out.
        value = _passed_entry(model, guard, info, test, site)
        if value is _UNDECIDED:
            return None
        return (value == literal) != negated
    if not type(test) is cst.Name:
        return None
    value = _passed(model, guard, info, test.value, site, owner)
    if value is _UNDECIDED:
        return None
    result = bool(value) if literal is _UNDECIDED else value == literal
    if literal is _UNDECIDED and type(guard.test) is cst.Comparison:
        return None  # a comparison with something other than a literal
    return result != negated


def _passed(model, guard, info: FunctionInfo, name: str, site, owner=None, depth: int = 0, singleton: bool = False):
    """The literal a call passes for a parameter the test reads unchanged (or its default),
    also one the call hands on from its own caller's parameter (up to two calls up). With
    ``singleton`` (an `is None` test), a value that cannot be None (a list the call builds,
    `batch["resp"]`) reads as `_SOMETHING`."""
    arg = _argument_for(model, guard, info, name, site)
    if arg is _UNDECIDED:
        return _UNDECIDED
    value = arg.value if arg is not None else parameter_default(info, name)
    if value is None:
        return _UNDECIDED
    if type(value) is cst.Name and owner is not None and depth < 2:
        handed = _handed_on(owner, site, value.value, depth, singleton)
        if handed is not _UNDECIDED:
            return handed
    if type(value) is cst.Name and owner is not None and value.value not in ("True", "False", "None"):
        # `use_unlabeled = True` in `main()`, then `train(..., use_unlabeled)`: a local constant
        found = literal_values(owner, value, site.ctx, site.order)
        if found.complete and found.option is None and len(found.values) == 1:
            kind, constant_value = next(iter(found.values))
            if kind in ("bool", "int", "str", "none"):
                return constant_value
    if dotted_name(value) == "self.training":
        return True  # `lbs(..., train=self.training)`: on a training step, the module trains
    if type(value) is cst.UnaryOperation and type(value.operator) is cst.Not and dotted_name(value.expression) == "self.training":
        return False  # `sample_pdf(..., det=not self.training)`: deterministic only outside training
    literal = _literal_value(value)
    if literal is _UNDECIDED and singleton and _never_none(owner, value, site):
        return _SOMETHING
    return literal


def _argument_for(model, guard, info: FunctionInfo, name: str, site):
    """The argument ``site`` passes for the parameter ``name`` that the test reads unchanged
    (None when the call leaves it to its default); `_UNDECIDED` when the test reads something
    else or a splat may hold the value."""
    if name not in info.params:
        return _UNDECIDED
    reach = model.bindings.reaching(name, guard.ctx, guard.order)
    if reach.parameter is not info or reach.assignments:
        return _UNDECIDED
    # A keyword the call names wins over any `*args` or `**kwargs` beside it (Python refuses
    # the call if they give it too); without one, a splat may hold the value.
    named = next((a for a in site.node.args if a.keyword is not None and a.keyword.value == name), None)
    if named is None and any(a.star for a in site.node.args):
        return _UNDECIDED
    return named or argument(site.node, name, info.params.index(name) - info.receiver_params)


def _passed_entry(model, guard, info: FunctionInfo, test: cst.Subscript, site):
    """The literal a call writes for `param["key"]` in the dict display it passes for the
    parameter (`{"name": "minibatch", "inputs": ...}`); undecided for anything else."""
    if type(test.value) is not cst.Name or len(test.slice) != 1 or type(test.slice[0].slice) is not cst.Index:
        return _UNDECIDED
    key = test.slice[0].slice.value
    if type(key) is not cst.SimpleString:
        return _UNDECIDED
    arg = _argument_for(model, guard, info, test.value.value, site)
    if arg is _UNDECIDED or arg is None or type(arg.value) is not cst.Dict:
        return _UNDECIDED
    for element in arg.value.elements:
        if type(element) is not cst.DictElement:
            return _UNDECIDED  # a `**spread` may hold the key
        if type(element.key) is cst.SimpleString and element.key.evaluated_value == key.evaluated_value:
            return _literal_value(element.value)
    return _UNDECIDED


def _handed_on(owner, site, name: str, depth: int, singleton: bool = False):
    """`self.decoder(x, infer=infer)` in a `forward(self, x, infer=True)` that every live call
    runs with `infer=False`: the literal all of them pass for the caller's own parameter."""
    caller = site.ctx.function
    if caller is None or name not in caller.params:
        return _UNDECIDED
    reach = owner.bindings.reaching(name, site.ctx, site.order)
    if reach.parameter is not caller or reach.assignments:
        return _UNDECIDED
    live = _deciding_callers(owner, caller)
    if not live:
        return _UNDECIDED
    values = []
    for upper_owner, upper in live:
        found = _passed(owner, site, caller, name, upper, upper_owner, depth + 1, singleton)
        if found is _UNDECIDED:
            return _UNDECIDED
        values.append(found)
    if all(v == values[0] for v in values):
        return values[0]
    if singleton and not any(v is None or v is True or v is False for v in values):
        # `data_type="real"` here, `data_type="cycle"` there: none of them is None
        return _SOMETHING
    return _UNDECIDED


# A value known not to be None, True or False (what an `is` test against them sees).
_SOMETHING = object()
# Values that are never None: containers, strings and numbers written out, and the results of
# operators (`mean + std * torch.randn_like(std)`, `-x`, `a < b`), which Python never makes None.
_BUILT = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp,
          cst.FormattedString, cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float,
          cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)


def _is_singleton(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value in ("None", "True", "False")


def _never_none(model, value: cst.BaseExpression, site) -> bool:
    """What a call passes is a built value (a list, a comprehension, a string, an operator's
    result), an item of a batch (`batch["resp"]`), or a local name every binding of which is one."""
    if _built_value(model, value):
        return True
    if type(value) is not cst.Name or model is None or site.ctx.function is None or value.value in site.ctx.function.params:
        return False
    found = model.reaching(value.value, site.ctx, site.order)
    return bool(found) and all(
        value is not None and (type(value) is cst.Subscript or _built_value(model, value))
        for value in (bound_element(a) for a in found)
    )


def _built_value(model, value: cst.BaseExpression) -> bool:
    """A value written out, an item of a batch, a measure, or a tensor method's result
    (`batch["mel"].cuda()`, `mel.to(device).float()`): never None."""
    if type(value) in _BUILT or (type(value) is cst.Subscript and type(value.value) is cst.Name):
        return True
    if _measured(model, value):
        return True
    return (type(value) is cst.Call and type(value.func) is cst.Attribute
            and value.func.attr.value in _TENSOR_METHODS)


# Methods that give a tensor's measure (`mel.size(1)`, `x.numel()`) and builtins that give a
# number: never None.
_MEASURES = frozenset({"size", "numel", "dim", "item", "nelement"})
_NUMBER_BUILTINS = frozenset({"len", "int", "float", "round", "abs", "max", "min", "sum"})
# Tensor methods whose result is a tensor, whatever they are called on.
_TENSOR_METHODS = frozenset({
    "to", "cuda", "float", "half", "bfloat16", "double", "long", "int", "bool", "contiguous",
    "detach", "clone", "unsqueeze", "squeeze", "view", "reshape", "permute", "transpose",
    "flatten", "type_as", "masked_fill",
})


def _measured(model, value: cst.BaseExpression) -> bool:
    """`mel_targets.size(1)`, `x.shape[1]`, `len(tokens)`, `int(n)`: a number, never None."""
    if type(value) is cst.Subscript and type(value.value) is cst.Attribute and value.value.attr.value == "shape":
        return True
    if type(value) is not cst.Call:
        return False
    func = value.func
    if type(func) is cst.Attribute:
        return func.attr.value in _MEASURES
    return (type(func) is cst.Name and func.value in _NUMBER_BUILTINS
            and (model is None or model.imports.qualify(func) is None))


def _literal_value(node: cst.BaseExpression):
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if type(node) is cst.SimpleString:
        return node.evaluated_value
    if type(node) is cst.Integer:
        return int(node.value, 0)
    return _UNDECIDED


def _returns_a_number(info: FunctionInfo) -> bool:
    """The forward says it returns a Python number (`-> float`): a metric module, whose result
    nothing can backpropagate through, computed when a caller evaluates, not per training step."""
    returns = info.node.returns
    return returns is not None and dotted_name(returns.annotation) in ("float", "int", "bool")


def _module_forward(model, info: FunctionInfo, own_bases: bool = True) -> bool:
    if info.class_name is None or info.node.name.value != "forward":
        return False
    cls = model.facts.classes.get(info.class_name)
    return cls is not None and (any(_module_base(b) for b in cls.bases)
                                or (own_bases and (_module_through_own_base(model, cls)
                                                   or _hugging_face_model_through_import(model, cls)
                                                   or _loss_through_import(model, cls))))


def _library_code(model) -> bool:
    project = getattr(model, "project", None)
    path = getattr(model, "real_path", None)
    if project is None or path is None:
        return False
    return project.layout.installable() or vendored(path, project.layout.root)


def _module_through_own_base(model, cls, depth: int = 0) -> bool:
    """`class UniVL(UniVLPreTrainedModel)` where the same file declares `class
    UniVLPreTrainedModel(PreTrainedModel, nn.Module)`: a model of the file's own hierarchy. Only
    bases of the same file count: a framework's base classes in other modules (fairseq's
    `FairseqLanguageModel`) would make every registered model of a vendored copy a forward
    the project runs."""
    if depth > 2:
        return False
    for base in cls.bases:
        own = model.facts.classes.get(base)
        if own is None or own is cls:
            continue
        if any(_module_base(b) for b in own.bases) or _module_through_own_base(model, own, depth + 1):
            return True
    return False


def _hugging_face_model_through_import(model, cls, depth: int = 0) -> bool:
    """`class BunnyLlamaForCausalLM(LlamaForCausalLM, ...)` where `LlamaForCausalLM` is the
    project's copy of a Hugging Face model (another module's class that derives, there or
    through that module's own classes, from `transformers.PreTrainedModel`): a model the
    Trainer runs. Only a Hugging Face root counts: a vendored framework's own module bases
    (fairseq's) stay out, as in `_module_through_own_base`."""
    if depth > 2:
        return False
    for base in cls.bases:
        if "." not in base or base.startswith("transformers."):
            continue
        symbol = model.symbol(base)
        if symbol is None or symbol.kind != "class" or symbol.info is cls:
            continue
        if _hugging_face_root(symbol.model, symbol.info, 0) or _hugging_face_model_through_import(
                symbol.model, symbol.info, depth + 1):
            return True
    return False


_LOSS_CLASS = re.compile(r"(Loss|Criterion)$")


def _loss_through_import(model, cls) -> bool:
    """`class HungarianLoss(WeightedLoss)` where `WeightedLoss` is another module's class of the
    project (not a vendored copy) built on a torch module (`torch.nn.modules.loss._Loss`): a
    criterion, which training calls once per step. Only losses, by their name: the bases of
    other kinds of class in other modules may be a framework's."""
    if not _LOSS_CLASS.search(cls.name):
        return False
    for base in cls.bases:
        if "." not in base:
            continue
        symbol = model.symbol(base)
        if symbol is None or symbol.kind != "class" or symbol.info is cls or symbol.model.real_path is None:
            continue
        project = symbol.model.project
        if project is not None and vendored(symbol.model.real_path, project.layout.root):
            continue
        if any(_module_base(b) for b in symbol.info.bases) or _module_through_own_base(symbol.model, symbol.info):
            return True
    return False


def _hugging_face_root(model, cls, depth: int) -> bool:
    """``cls`` derives from a Hugging Face model class, directly or through its file's classes."""
    if depth > 3:
        return False
    for base in cls.bases:
        if base.startswith("transformers.") and _module_base(base):
            return True
        own = model.facts.classes.get(base)
        if own is not None and own is not cls and _hugging_face_root(model, own, depth + 1):
            return True
    return False


# The model packages of OpenMMLab's libraries: every class there is a module (a detector, a
# head, a neck), whose `forward` the library's runner calls on every step.
_OPENMMLAB_MODELS = ("mmdet.models.", "mmdet3d.models.", "mmseg.models.", "mmpose.models.", "mmaction.models.",
                     "mmrotate.models.", "mmocr.models.", "mmtrack.models.")


# Graph libraries' layer bases, themselves modules (`class GINConv(MessagePassing)`).
_GRAPH_LAYERS = ("torch_geometric.nn.", "dgl.nn.")


def _module_base(base: str) -> bool:
    """`torch.nn.Module`, a project base named `...Module`, a Hugging Face model class
    (`transformers.LlamaForCausalLM`, `transformers.PreTrainedModel`), a graph layer base
    (`torch_geometric.nn.MessagePassing`)."""
    if base.startswith(("torch.nn.",) + _GRAPH_LAYERS) or base.endswith("Module") or base.startswith(_OPENMMLAB_MODELS):
        return True
    last = base.rsplit(".", 1)[-1]
    return base.startswith("transformers.") and (last.endswith("Model") or "For" in last)


def _built_never_called(model, info: FunctionInfo) -> bool:
    """The forward's class is built by name in the project (not from a registry or a config
    name), yet no call of the project is seen to run it: its instances go where the analysis
    cannot follow (a list of blocks, some of which the model's loop skips), so whether it runs
    at all is a guess."""
    if _live_callers(model, info)[0]:
        return False
    cls = model.facts.classes.get(info.class_name or "")
    if cls is None or _registered(cls.node):
        return False
    init = model.facts.functions.get(f"{info.class_name}.__init__")
    if init is not None:
        built = model.calls.constructions(init)
        return bool(built) and not any(_run_out_of_sight(owner, site) for owner, site in built)
    return any(  # no `__init__` of its own: calls of its name in this file
        type(site.node.func) is cst.Name and site.node.func.value == info.class_name
        for site in model.calls.candidates(info.class_name)
    )


# A library object or call that runs the model it is handed: a trainer, an engine, a runner
# (`Trainer(model=model, ...)`, `trainer.fit(model)`, `accelerator.prepare(model, opt)`).
_RUNS_WHAT_IT_IS_GIVEN = re.compile(r"(Trainer|Engine|Runner)$|^(fit|prepare|setup|train)$")


def _run_out_of_sight(model, site) -> bool:
    """The instance a construction builds is handed, in the same function, to a library call
    that runs it (a Hugging Face `Trainer`, Lightning's `fit`), or returned by a top-level
    factory function: its forward runs every step, though no call of the project is seen to
    run it."""
    name = site.assigned_to
    if not name:
        return False
    function = site.ctx.function
    if (function is not None and function.class_name is None and function.ctx is not None and function.ctx.function is None
            and any(type(r.value) is cst.Name and r.value.value == name for r in function.return_sites)):
        # `def posecnn(num_classes, ...): model = PoseCNN(...); ...; return model`: a factory
        # hands the model to whoever builds it by name (`networks.__dict__[args.network](...)`).
        return True
    for call in calls_handing(model, site, name):
        callee = dotted_name(call.node.func) or ""
        if _RUNS_WHAT_IT_IS_GIVEN.search(callee.rsplit(".", 1)[-1]) and not model.calls.targets(call):
            return True
    return False


def _training_forward(model, info: FunctionInfo) -> bool:
    cls = model.facts.classes.get(info.class_name or "")
    if cls is not None and (_registered(cls.node) or _in_a_registry_dict(model, cls)) and not class_parameter_free(model, cls):
        # A registry of a metrics library holds parameter-free measures (an image-quality
        # index computed by formula) beside the trained models: being registered says nothing
        # of those (their forward may still compute a loss).
        return True
    params = info.node.params
    if any(p.name.value in _TARGET_PARAMETERS or _TARGET_PARAMETER.search(p.name.value)
           for p in (*params.params, *params.kwonly_params)):
        return True
    return id(info) in _loss_functions(model)


def _in_a_registry_dict(model, cls) -> bool:
    """The class is a value of a dict written out at module level in its file or a file that
    imports it (`MODELS = {"predrnn": PredRNN, ...}`, then `MODELS[cfg.arch](params)`): a
    registry of the project's models, as a registering decorator makes."""
    known = model.shared("registry-dict-classes", lambda m: {})
    if cls.name not in known:
        project = getattr(model, "project", None)
        owners = [model] + (project.importers_through_packages(model) if project is not None else [])
        known[cls.name] = any(_dict_values_name(owner, cls.name) for owner in owners)
    return known[cls.name]


def _dict_values_name(owner, name: str) -> bool:
    names = owner.shared("registry-dict-values", _registry_dict_values)
    return name in names


def _registry_dict_values(model) -> Set[str]:
    """The plain names that module-level dict displays of the file hold as values."""
    out: Set[str] = set()
    for assignments in model.facts.assignments.values():
        for assignment in assignments:
            value = assignment.value
            if assignment.ctx.function is None and type(value) is cst.Dict and len(value.elements) > 1:
                out.update(e.value.value for e in value.elements
                           if type(e) is cst.DictElement and type(e.value) is cst.Name)
    return out


def _loss_functions(model) -> Set[int]:
    """Functions of the file that call a loss (`F.cross_entropy`, `self.aux_loss(...)`)."""
    def compute(model) -> Set[int]:
        out: Set[int] = set()
        for site in model.facts.calls:
            if site.ctx.function is None:
                continue
            name = (site.qualname or site.method or dotted_name(site.node.func) or "").rsplit(".", 1)[-1].lower()
            if "loss" in name or "cross_entropy" in name or name == "backward":
                out.add(id(site.ctx.function))
        return out

    return model.shared("loss-computing-functions", compute)


def inference_branch(ctx: Context) -> bool:
    """Under `if not self.training:` (also as one part of `if self.self_ensemble and not
    self.training:`, and of a flag the model is built with to say it trains, `if not
    self.trainable:`), or in the `else` of `if self.training:` (also of `if self.training or
    not self.use_dynamic_ntk:`, and its `elif` arms), or under a test of the mode the
    inference settings pick (`if self.config["inference"]["type"] == "beam_search":`), or under
    a test that a forward was handed a generation's key-value cache (`if past_key_values is not
    None and input_ids.shape[1] == 1:`), or in an arm a forward takes only without the targets
    it computes its loss from (`model/target_arms.py`)."""
    current: Optional[Context] = ctx
    while current is not None:
        guard = current.guard
        if guard is not None and not guard.positive and _names_training_as_alternative(guard.test):
            return True  # the `else` (or an `elif`) of `if self.training or not self.use_ntk:`
        if guard is not None:
            parts = [guard.test]
            if guard.positive and type(guard.test) is cst.BooleanOperation and type(guard.test.operator) is cst.And:
                parts = conjuncts(guard.test)
            for test in parts:
                positive = guard.positive
                if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                    test, positive = test.expression, not positive
                if not positive and _training_flag(dotted_name(test)):
                    return True
                if positive and (_inference_mode_test(test) or _cached_decoding_test(test)):
                    return True
            if no_target_arm(guard, current.function):
                return True  # `if target is None or return_preds:` of a forward that trains with targets
        current = current.outer
    return False


# Flags a model is built with that say it is built to train (`Detector(trainable=True)` for
# the training run, `trainable=False` for the demo): where they fail, its forward predicts,
# as where `self.training` fails.
_TRAINING_FLAGS = frozenset({"self.training", "self.trainable", "self.is_train", "self.is_training",
                             "self.train_mode", "self.training_mode"})


def _training_flag(name: Optional[str]) -> bool:
    return name in _TRAINING_FLAGS


def _names_training_as_alternative(test: cst.BaseExpression) -> bool:
    """`self.training or ...`: where the test fails, the module is in eval mode."""
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.BooleanOperation and type(node.operator) is cst.Or:
            stack.extend((node.left, node.right))
        elif _training_flag(dotted_name(node)):
            return True
    return False


# What a model's forward is handed only while it generates, one token at a time, from the keys
# and values it cached (Hugging Face's convention): training passes none.
_DECODING_CACHE = frozenset({"past_key_values", "past_key_value", "layer_past"})


def _cached_decoding_test(test: cst.BaseExpression) -> bool:
    """`if past_key_values is not None:` (a part of an `and` test too): the branch of a forward
    that extends a generation from its cache."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.IsNot:
        return False
    comparator = test.comparisons[0].comparator
    return (type(comparator) is cst.Name and comparator.value == "None" and type(test.left) is cst.Name
            and test.left.value in _DECODING_CACHE)


def _inference_mode_test(test: cst.BaseExpression) -> bool:
    """`if self.config["inference"]["type"] == "beam_search":`: a mode the settings for
    inference pick (a decoding the model runs when asked for predictions)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    if not any(type(side) is cst.SimpleString for side in sides):
        return False
    for side in sides:
        node = side
        while type(node) in (cst.Subscript, cst.Attribute):
            if type(node) is cst.Attribute:
                key = node.attr.value
            else:
                index = node.slice[0].slice if len(node.slice) == 1 else None
                key = (index.value.evaluated_value if type(index) is cst.Index and type(index.value) is cst.SimpleString
                       else None)
            if key == "inference":
                return True
            node = node.value
    return False

