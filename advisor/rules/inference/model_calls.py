"""Helpers shared by the inference rules."""

from __future__ import annotations
import os
import re
from typing import List, Optional, Set, Tuple
import libcst as cst
from advisor.model.instances import INSTANCES, plain_objects_of
from advisor.model.calls import class_kinds, class_method
from advisor.model.kinds import declared_kinds
from advisor.model import CallSite, Context, FileModel, FunctionInfo, Heat, LoopInfo
from advisor.model.file_model import literal_bool
from advisor.model.guards import every_call_path
from advisor.model.names import dotted_name, last_segment, root_name
from advisor.model.subtree import iter_names


# What a model is called: `model`, `net`, `self.model`, `ema_model`, `q_net`, `classifier`.
MODEL_NAME = re.compile(r"(^|_)(model|net|network|classifier|backbone|encoder|decoder)$", re.IGNORECASE)

# A verb before the noun names an action on a model (`experiment.log_model(...)`,
# `save_model(...)`, `build_model(cfg)`), not a model: the name alone says nothing then.
ACTION_ON_A_MODEL = re.compile(
    r"^(log|save|load|build|get|create|init|update|export|register|wrap|compile|freeze|unfreeze|print|summari[sz]e"
    r"|prepare|setup|set|make|upload|download|push|convert|check|watch|restore|fit|run|reset|copy|unwrap|merge"
    r"|offload|quantize|patch|replace|remove|add|apply|cast|move|shard|clone|validate|evaluate|fuse|calibrate"
    r"|trace|profile|describe|show|count|inspect|display"
    # Picking one out of a collection (`shapenet.random_model(n)`, `zoo.select_model(name)`).
    r"|random|sample|pick|choose|select|fetch|find|spawn)_",
    re.IGNORECASE,
)


# Modules that are not models: losses, metrics and parameter-free layers.
NOT_A_MODEL = re.compile(r"loss|criterion|crit$|metric|act|pool|drop|norm|softmax|sigmoid|relu", re.IGNORECASE)


MODEL_FACTORIES = ("torchvision.models.", "timm.create_model", "torch.hub.load", "torch.jit.load")


# What `from_pretrained` also builds that is not a network.
NOT_A_NETWORK = re.compile(r"Tokenizer|Processor|Config|Extractor|Pipeline|Dataset|Scheduler", re.IGNORECASE)


# Lightning and the Hugging Face Trainer call these with autograd and train/eval mode set for you.
FRAMEWORK_METHODS = frozenset(
    {"training_step", "validation_step", "test_step", "predict_step", "prediction_step", "evaluation_loop", "forward"}
)


FRAMEWORK_PACKAGES = ("lightning", "pytorch_lightning", "transformers")


TORCH_PACKAGES = ("torch", "transformers", "torchvision", "timm", "lightning", "pytorch_lightning", "accelerate")


TORCH_TEXT = TORCH_PACKAGES  # the import statement names one of them


def torch_file(model: FileModel) -> bool:
    """Only PyTorch code: a `model(x)` in a JAX or Keras script is none of our business."""
    return model.uses_framework(*TORCH_PACKAGES)


def class_bases(model: FileModel, info: Optional[FunctionInfo]) -> Tuple[str, ...]:
    if info is None or info.class_name is None:
        return ()
    found = model.facts.classes.get(info.class_name)
    return found.bases if found is not None else ()


def framework_owned(model: FileModel, info: Optional[FunctionInfo]) -> bool:
    """A model's own `forward`, or a method of a Lightning module, an `nn.Module` or an HF Trainer."""
    if info is None:
        return False
    if info.node.name.value in FRAMEWORK_METHODS:
        return True
    for base in class_bases(model, info):
        if base.startswith(FRAMEWORK_PACKAGES) or base in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            return True
    # A module through the project's own base classes (`ActorCriticPolicy(BasePolicy)`,
    # `BasePolicy(BaseModel)`, `BaseModel(nn.Module)`) is a module as well.
    cls = model.facts.classes.get(info.class_name or "")
    return cls is not None and "module" in class_kinds(model, cls)


def built_as_model(model: FileModel, value: cst.BaseExpression) -> bool:
    """`Net()` for an nn.Module subclass of the file, `resnet50()`, `AutoModel.from_pretrained(...)`,
    `torch.jit.load(...)`, and `.to()`/`.cuda()`/`.eval()` chains on them."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in (
        "to", "cuda", "eval", "half", "float", "bfloat16", "train"
    ):
        value = value.func.value
    if not type(value) is cst.Call:
        return False
    qual = model.imports.qualify(value.func) or ""
    if NOT_A_NETWORK.search(qual):
        return False
    if type(value.func) is cst.Attribute and value.func.attr.value == "from_pretrained":
        return not NOT_A_NETWORK.search(dotted_name(value.func) or "")
    if qual.startswith(MODEL_FACTORIES):
        return True
    name = dotted_name(value.func)
    info = model.facts.classes.get(name or "")
    return info is not None and any(b.startswith("torch.nn.") or b.endswith("Module") for b in info.bases)


# Where a whole pickled module comes from: its parameters keep the `requires_grad` they were
# saved with (frozen EMA copies, feature extractors), which the file cannot see.
# `torch.load` too: a model name bound to what it loads (`checkpoint["encoder"]`) is a whole
# module saved with `torch.save(module)`, not a state dict (which is not called).
UNPICKLERS = frozenset({"pickle.load", "pickle.loads", "dill.load", "cloudpickle.load", "torch.load"})


def unpickled(model: FileModel, func: cst.BaseExpression, ctx: Context) -> bool:
    """Every binding of the model's name is an unpickled object (`pickle.load(f)["ema"].to(device)`),
    also through names on the way (`encoder = checkpoint["encoder"]; encoder = encoder.to(device)`
    after `checkpoint = torch.load(path)`), read where the bindings reach."""
    name = dotted_name(func)
    found = model.assignments(name, ctx) if name is not None else []
    if not found:
        return False
    origins = [a for a in found if not _rebinds_itself(a)]
    return bool(origins) and all(_loaded(model, a, 0) for a in origins)


def _rebinds_itself(assignment) -> bool:
    """`encoder = encoder.to(device)`: what it holds is what the earlier binding held."""
    value = assignment.value
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _MOVES:
        value = value.func.value
    return type(value) is cst.Name and value.value == assignment.target


_MOVES = ("to", "cuda", "eval", "half", "float")


def _loaded(model: FileModel, assignment, depth: int) -> bool:
    value = assignment.value
    while type(value) in (cst.Call, cst.Subscript) and not (
        type(value) is cst.Call and model.imports.qualify(value.func) in UNPICKLERS
    ):
        if type(value) is cst.Subscript:
            value = value.value
        elif type(value.func) is cst.Attribute and value.func.attr.value in _MOVES:
            value = value.func.value
        else:
            return False
    if type(value) is cst.Name and depth < 2:
        # `checkpoint["encoder"]`: what the name holds where this binding reads it
        reach = model.bindings.reaching(value.value, assignment.ctx, assignment.order)
        return bool(reach.assignments) and reach.closed and all(
            a.value is not None and _loaded(model, a, depth + 1) for a in reach.assignments)
    return type(value) is cst.Call


# Libraries whose loaded "models" are no torch modules: calling one has no autograd and no mode.
_OTHER_LIBRARIES = (
    "spacy.", "sklearn.", "joblib.", "xgboost.", "lightgbm.", "catboost.", "gensim.", "nltk.", "cv2.",
    "onnxruntime.", "tensorflow.", "keras.", "jax.", "fasttext.", "sentencepiece.", "tiktoken.",
)


def _other_library_object(model: FileModel, name: str, ctx: Context) -> bool:
    """Every binding of the name is made by another library (`SPACY_MODEL =
    spacy.load("en_core_web_lg")`, `clf = joblib.load(path)`)."""
    found = model.assignments(name, ctx)
    return bool(found) and all(
        type(a.value) is cst.Call and (model.imports.qualify(a.value.func) or "").startswith(_OTHER_LIBRARIES)
        for a in found
    )


def _plain_wrapper(model: FileModel, func: cst.BaseExpression, ctx: Context, order: int) -> bool:
    """Named like a model, but every instance it holds is of a plain project class whose call
    runs no model (`trt_model = TensorRTModel(path)`, an engine runner: autograd has nothing
    to record)."""
    found = plain_objects_of(model, func, ctx, order)
    for owner, info in found:
        hit = class_method(owner, info, "__call__")
        if hit is None or any(_may_run_a_model(hit[0], s) for s in hit[1].sites):
            return False
    return bool(found)


def _may_run_a_model(owner: FileModel, site: CallSite) -> bool:
    name = dotted_name(site.node.func)
    if name is None or site.qualname is not None:
        return False
    kinds = owner.kinds(site.node.func, site.ctx, site.order)
    return bool(MODEL_NAME.search(last_segment(name))) or "module" in kinds or "ddp" in kinds


def is_model(model: FileModel, func: cst.BaseExpression, ctx: Context, order: int) -> bool:
    """The callee of a call is a model: named like one, a DDP/nn module, or built as one."""
    name = dotted_name(func)
    if name is None or name in ("self", "cls") or model.imports.qualify(func) is not None:
        return False
    if name in model.facts.functions:
        return False  # a function of the file (`convert_model(...)`), not a network
    if name in model.facts.classes and not model.assignments(name, ctx):
        return False  # building an instance of a class of the file (`model = Model()`), not running one
    last = last_segment(name)
    kinds = model.kinds(func, ctx, order)
    if "pipeline" in kinds or "pipeline" in declared_kinds(model, name, ctx):
        return False  # a generation pipeline of several models: no mode of its own
    if MODEL_NAME.search(last) and not ACTION_ON_A_MODEL.search(last):
        return not _other_library_object(model, name, ctx) and not _plain_wrapper(model, func, ctx, order)
    if NOT_A_MODEL.search(last):
        return False
    if "ddp" in kinds or "module" in kinds:
        return True
    return any(a.value is not None and built_as_model(model, a.value) for a in model.assignments(name, ctx))


def model_calls(model: FileModel) -> List[CallSite]:
    """Calls of a model (`model(x)`, `self.net(x)`, `model.forward(x)`), in source order.
    Four rules ask; the answer is computed once per file."""
    return model.shared("inference.model_calls", find_model_calls)


def find_model_calls(model: FileModel) -> List[CallSite]:
    out = []
    for site in model.facts.calls:
        if site.qualname is not None:
            continue
        func = site.node.func
        if site.method == "forward" and site.receiver is not None:
            func = site.receiver
        if is_model(model, func, site.ctx, site.order) and not _project_helper(model, site):
            out.append(site)
    return out


def _project_helper(model: FileModel, site: CallSite) -> bool:
    """The call runs a function or method of the project that is no module's `forward` and
    calls no model itself (`cls.extract_embedder_from_model(model)`, named like a model but a
    helper that only unwraps it); `model.predict(x)`, which runs the model, stays a model call."""
    if site.method == "forward":
        return False
    targets = model.calls.targets(site)
    return bool(targets) and all(
        info.node.name.value not in ("forward", "__call__")
        and not any(is_model(owner, s.node.func, s.ctx, s.order) for s in info.sites)
        for owner, info in targets
    )


def grad_off_call(model: FileModel, ctx: Context) -> bool:
    """`torch.set_grad_enabled(False)` called as a statement in the same function or at module level."""
    for qual, sites in model.facts.calls_by_qualname.items():
        if not qual.endswith("set_grad_enabled"):
            continue
        for site in sites:
            if site.with_item or not site.node.args or literal_bool(site.node.args[0].value) is not False:
                continue
            if site.ctx.function is None or site.ctx.function is ctx.function:
                return True
    return False


# How many calls up the project's callers are followed to a no-grad block (an evaluation entry
# under `torch.no_grad()` that runs `validation`, then `process`, then `predict_many`).
_PROJECT_DEPTH = 4


def grad_disabled(model: FileModel, ctx: Context) -> Optional[bool]:
    """Autograd is off here: a no-grad `with`, a decorated function, or every path of calls in the
    file that runs it (up to three calls up in the file, four in the project: `test()` under `no_grad` runs `benchmark_all()`,
    which runs `validation()`) passes through one. None when the function has no caller in the
    file to look at."""
    if ctx.no_grad or grad_off_call(model, ctx):
        return True
    info = ctx.function
    if info is None:
        return False
    if info.no_grad:
        return True
    callers = model.call_sites(info)
    if not callers:
        return True if _grad_off_in_project(model, info, _PROJECT_DEPTH) else None
    return every_call_path(model, info, _grad_off_at) or _grad_off_in_project(model, info, _PROJECT_DEPTH)


def _grad_off_in_project(model: FileModel, info, depth: int) -> bool:
    """Every call of the function in the project (this file and the files that import it,
    up to ``depth`` calls up) passes through no-grad code: `generate_image(...)` called only
    by a `@torch.no_grad()` validation in another module."""
    callers = model.callers(info)
    if not callers and info.class_name is not None:
        callers = _calls_by_method_name(model, info)
    if not callers or depth <= 0:
        return False
    for owner, site in callers:
        if _grad_off_at(owner, site.ctx, site.node):
            continue
        outer = site.ctx.function
        if outer is None or outer is info or not _grad_off_in_project(owner, outer, depth - 1):
            return False
    return True


def _calls_by_method_name(model: FileModel, info):
    """`policy.predict_action(obs)` on objects a config built, in the project files near this
    one: every call of a method of that name whose receiver is not known to be another class's
    instance, as (model, site). Empty when a file that names the method cannot be read."""
    name = info.node.name.value
    project = model.project
    if project is None or model.real_path is None:
        return []
    nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(model.real_path)}
    out = []
    for path in sorted(project.files_containing(f".{name}(")):
        if os.path.normpath(os.path.abspath(path)) not in nearby:
            continue
        other = project.model(path)
        if other is None:
            return []
        for site in other.method_calls(name):
            if site.receiver_name in ("self", "cls"):
                continue
            found, known = other.values.ask(INSTANCES, site.receiver, site.ctx, site.order)
            if known and found and all(cls.name != info.class_name for _, cls in found):
                continue  # `evaluators.evaluate(...)` on an instance of another class
            out.append((other, site))
    return out


def _grad_off_at(model: FileModel, ctx: Context, node) -> bool:
    return ctx.no_grad or (ctx.function is not None and ctx.function.no_grad) or bool(grad_off_call(model, ctx))


def marker_sites(model: FileModel) -> List[CallSite]:
    return model.method_calls("backward") + model.calls_to("torch.autograd.backward", "torch.autograd.grad")


def feeds_training(model: FileModel, site: CallSite, markers: List[CallSite]) -> bool:
    """The call may be part of a training computation: in a training loop or in code that runs
    every step, or in a function (or module) that backpropagates outside any loop afterwards
    (REINFORCE-style rollouts whose log-probabilities are used after the loop)."""
    loop = site.ctx.loop
    while loop is not None:
        if model.is_training_loop(loop):
            if model.is_hot_loop(loop) and not site.ctx.gated:
                return True
            if loop is site.ctx.loop:
                return True
        elif loop is site.ctx.loop and model.backpropagates(loop):
            return True  # gradients without an update (a benchmark of the backward pass)
        loop = loop.parent
    info = site.ctx.function
    if info is not None:
        if model.function_heat(info.key) is Heat.HOT:
            return True
        if info.direct_marker and any(m.ctx.function is info and m.ctx.loop is None for m in markers):
            return True
        if any(m.qualname == "torch.autograd.grad" and m.ctx.function is info for m in markers):
            return True
        for key in info.callees:
            callee = model.resolve(key)
            if callee is not None and model.function_trains(callee.key) and not model.function_has_training_loop(callee.key):
                if any(c.ctx.function is info and c.ctx.loop is None for c in model.call_sites(callee)):
                    return True
        return False
    return any(m.ctx.function is None and m.ctx.loop is None for m in markers)


def _bound_by_value(model: FileModel):
    out = {}
    for found in model.facts.assignments.values():
        for assignment in found:
            if assignment.value is not None:
                out.setdefault(id(assignment.value), []).append(assignment.target)
    return out


def results_feed_training(model: FileModel, info: FunctionInfo) -> bool:
    """What the function returns is handed to a function that trains, by some caller
    (`bank = init_memory(loader, model); train(loader, model, bank)`): a pass that fills a
    memory bank or initialises centroids for training, not an evaluation."""
    known = model.shared("inference.results-feed-training", lambda _: {})
    if id(info) not in known:
        known[id(info)] = _results_feed_training(model, info)
    return known[id(info)]


def _results_feed_training(model: FileModel, info: FunctionInfo) -> bool:
    bound = model.shared("inference.bound-by-value", _bound_by_value)
    for call in model.call_sites(info):
        names = set(bound.get(id(call.node), ()))
        if not names:
            continue
        later = call.ctx.function.sites if call.ctx.function is not None else model.facts.calls
        for other in later:
            if other.ctx.scope != call.ctx.scope or other.order <= call.order:
                continue
            if not any(name in names for arg in other.node.args for name in iter_names(arg.value)):
                continue
            if any(owner.trains(target) or owner.has_training_loop(target) for owner, target in model.calls.targets(other)):
                return True
    return False


def first_per(sites: List[CallSite], key) -> List[CallSite]:
    seen: Set = set()
    out = []
    for site in sites:
        k = key(site)
        if k in seen:
            continue
        seen.add(k)
        out.append(site)
    return out


CACHE_KEYWORDS = frozenset({"past_key_values", "past", "use_cache", "cache", "kv_cache", "layer_past", "start_pos", "cache_position"})


def grown_names(model: FileModel, loop: LoopInfo) -> Set[str]:
    """Names the loop grows by concatenation: `ids = torch.cat([ids, next_token], dim=-1)`."""
    out: Set[str] = set()
    for site in model.calls_to("torch.cat", "torch.concat", "torch.concatenate"):
        target = site.assigned_to
        if target is None or not (site.ctx.loop is not None and site.ctx.loop.within(loop)) or not site.node.args:
            continue
        first = site.node.args[0].value
        if type(first) in (cst.List, cst.Tuple) and any(
            type(e.value) is cst.Name and e.value.value == target for e in first.elements
        ):
            out.add(target)
    return out


def derived_from(model: FileModel, expr: cst.BaseExpression, names: Set[str], ctx: Context, order: int) -> bool:
    """The expression is one of ``names``, or a name bound in the loop to an expression over them
    (`idx_cond = idx[:, -block_size:]`)."""
    root = root_name(expr)
    if root is None:
        return False
    if root in names:
        return True
    reaching = model.reaching_assignment(root, ctx, order)
    return (
        reaching is not None
        and reaching.value is not None
        and reaching.ctx.loop is not None
        and any(n in names for n in iter_names(reaching.value))
    )
