"""Functions a training framework runs once per training step, though no loop of the file
calls them: a LightningModule's `training_step`, a Hugging Face `Trainer` subclass's
`compute_loss`, the process function an Ignite `Engine` is built with. The loop lives in the
framework, so the file shows no loop; what such a function does, it does on every step.
"""

from __future__ import annotations

from typing import Set

import libcst as cst

from advisor.model.facts import FunctionInfo
from advisor.model.names import dotted_name
from advisor.model.vocabulary import ENGINES, FRAMEWORK_STEP_METHODS, FRAMEWORK_STEP_PACKAGES


def is_framework_step(model, info: FunctionInfo) -> bool:
    if info.no_grad:
        return False
    if info.class_name is not None:
        return _step_method(model, info)
    return id(info) in _engine_functions(model)


def _step_method(model, info: FunctionInfo) -> bool:
    if not model.uses_framework(*FRAMEWORK_STEP_PACKAGES):
        return False
    cls = model.facts.classes.get(info.class_name or "")
    if cls is None:
        return False
    name = info.node.name.value
    return any(name in FRAMEWORK_STEP_METHODS.get(base.rsplit(".", 1)[-1], ()) for base in cls.bases)


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
            if arg is None or not isinstance(arg.value, cst.Name):
                continue
            info = model.bindings.function(arg.value.value, site.ctx, site.order)
            if info is not None and model.trains(info):
                out.add(id(info))
        return out

    return model.shared("engine-step-functions", compute)


def runs_per_batch(model, info: FunctionInfo, unreached: bool = False, depth: int = 0) -> bool:
    """A module's `forward` (of an `nn.Module` subclass of the file), or a function of the file
    that such code calls (up to three calls down): it runs on every batch the module sees, in
    training and evaluation alike, however the module is built (from a registry, a config
    name). With ``unreached``, only the forward of a class put in a registry
    (`@MODEL_REGISTRY.register()`) that no call of the project is seen to run: the model is
    built where the call graph cannot follow (`MODEL_REGISTRY.get(name)(cfg)`), and the
    registry is how the training script gets its model."""
    if depth > 3:
        return False
    if info.class_name is not None and info.node.name.value == "forward":
        cls = model.facts.classes.get(info.class_name)
        if cls is None or not any(b.startswith("torch.nn.") or b.endswith("Module") for b in cls.bases):
            return False
        return not unreached or (_registered(cls.node) and not model.callers(info))
    return any(
        owner is model and site.ctx.function is not None and site.ctx.function is not info
        and runs_per_batch(model, site.ctx.function, unreached, depth + 1)
        for owner, site in model.callers(info)
    )


def _registered(node: cst.ClassDef) -> bool:
    """`@REGISTRY.register()`, `@register_model`, `@registry.register("name")` above the class."""
    for decorator in node.decorators:
        target = decorator.decorator
        if isinstance(target, cst.Call):
            target = target.func
        name = dotted_name(target) or ""
        if "register" in name.rsplit(".", 1)[-1].lower():
            return True
    return False
