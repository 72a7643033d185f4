"""Helpers shared by the pipeline rules."""

from __future__ import annotations
import re
from typing import Dict, List, Optional, Set, Tuple
import libcst as cst
from advisor.model import CallSite, Context, FileModel, Heat
from advisor.model.file_model import body_runs_once, call_argument
from advisor.model.call_options import Option, call_option
from advisor.model.type_tests import annotated_kind
from advisor.model.engine_runs import EngineRun, engine_runs_over
from advisor.model.epoch_passes import pass_every_few_epochs
from advisor.model.loaders import (
    batch_names, loader_consumers, loader_factory, loaders_drawn, loaders_held, loaders_iterated, placed_by_framework,
)
from advisor.model.passes import passes_over
from advisor.model.lightning_loaders import lightning_training_loader
from advisor.model.user_waits import waits_for_user
from advisor.model.devices import cuda_tensor_type, device_kind
from advisor.model.value_flow import argument
from advisor.model.tensors import is_host_tensor
from advisor.model.names import dotted_name, root_name, variable_inner
from advisor.model.vocabulary import DEVICE_NAME
from advisor.model.subtree import reads_any
from advisor.model.facts import MODULE_SCOPE
from advisor.model.walk import children
from advisor.model.guards import conjuncts
from advisor.model.handed_names import calls_handing
from advisor.model.literals import literal_values


DTYPE_PREFIX = "torch."


DTYPES = frozenset(
    "float16 float32 float64 bfloat16 half float double long int int8 int16 int32 int64 uint8 bool "
    "complex64 complex128 cfloat".split()
)


def is_device_move(model: FileModel, site: CallSite) -> bool:
    """A move to a device (`moves_to_device`) whose target is not the host on every path the
    value model follows (`.to(self.device)` where each construction of the trainer passes
    `torch.device("cpu")`)."""
    if site.method is None or not moves_to_device(model, site.node, site.method):
        return False
    if site.method != "to":
        return True
    target = argument(site.node, "device", 0)
    return target is None or device_kind(model, target.value, site.ctx, site.order) != "host"


def moves_to_device(model: FileModel, call: cst.Call, method: str) -> bool:
    """`x.cuda()`, `x.to(device)` (not a dtype, not "cpu"), `x.type(torch.cuda.FloatTensor)`."""
    if method == "cuda":
        return True
    if method == "type":
        # `x.type(torch.cuda.FloatTensor)`: a CUDA tensor type moves the data too.
        first = call.args[0].value if call.args else None
        return first is not None and cuda_tensor_type(model, first, call)
    if method != "to" or not call.args:
        return False
    first = call.args[0]
    if first.keyword is not None and first.keyword.value != "device":
        return False
    value = first.value
    if type(value) is cst.SimpleString:
        return "cpu" not in value.value
    qual = model.imports.qualify(value) or ""
    return not (qual.startswith(DTYPE_PREFIX) and qual[len(DTYPE_PREFIX):] in DTYPES)


def only_peeked_now_and_then(model: FileModel, site: CallSite) -> bool:
    """No loop of the file goes over the loader; it is read only by iterators made every few
    steps (`next(iter(val_loader))` in a `sample_images()` run every 500 batches): what its
    batches cost is paid now and then, not per step."""
    passes = passes_over(model, site)
    if not passes:
        passes_ok = _peeked_under_periodic_tests(model, site)
    else:
        passes_ok = all(p.periodic for p in passes)
    if not passes_ok:
        return False
    return not any(any(found is site for found in loaders_iterated(model, loop)[0]) for loop in model.facts.loops)


def _peeked_under_periodic_tests(model: FileModel, site: CallSite) -> bool:
    """Every read of the loader is `next(iter(loader))` under a test that holds every few passes
    (`if epoch % plot_freq == 0:` in the epoch loop): a batch now and then."""
    name = site.assigned_to
    if name is None:
        return False
    reads = [
        call for call in model.facts.calls_by_callee.get("iter", ())
        if len(call.node.args) == 1 and dotted_name(call.node.args[0].value) == name
    ]
    if not reads or not all(call.ctx.loop is not None and model.guards.periodic(call.ctx) for call in reads):
        return False
    # Named nowhere else in the file (`self.plot_loader` too): not handed on, not iterated.
    return model.shared("dotted-name-counts", _dotted_counts).get(name, 0) == 1 + len(reads)


def drawn_once(model: FileModel, site: CallSite) -> bool:
    """The loader is read only by `next(iter(loader))` at the top of the script, or in the function
    that builds it (outside loops, in a function no training loop runs): one batch, drawn once,
    before or after training. No loop of the project goes over it, and no iterator over it is
    made again."""
    name = site.assigned_to
    if name is None or site.ctx.loop is not None or passes_over(model, site):
        return False
    reads = [
        call for call in model.facts.calls_by_callee.get("iter", ())
        if len(call.node.args) == 1 and dotted_name(call.node.args[0].value) == name
    ]
    # In the function that builds it (`warm_loader = DataLoader(...)`, then `data =
    # next(iter(warm_loader))` for one initialising forward), or at the top of the script.
    if not reads or any(call.ctx.loop is not None or call.ctx.function is not site.ctx.function for call in reads):
        return False
    function = site.ctx.function
    if function is not None and model.heat(site.ctx) is not None:
        return False  # a helper the training loop calls: a new loader, and a batch, every step
    if function is None:
        # Named nowhere else in the file: not run by an engine, not handed to a function.
        if model.shared("name-counts", _name_counts).get(name, 0) != 1 + len(reads):
            return False
    elif not _only_drawn_once(model, function, name, reads):
        return False
    if any(other is not model for other, _ in loader_consumers(model, site)):
        return False
    return not any(any(found is site for found in loaders_iterated(model, loop)[0]) for loop in model.facts.loops)


def _only_drawn_once(model: FileModel, function, name: str, reads) -> bool:
    """In ``function``, the loader name is mentioned only where it is bound and in ``reads``
    (`iter(name)`), each of which is drawn from with `next(...)` right away or through a name
    mentioned only where it is bound and in `next(it)` calls outside loops (`data_iter =
    iter(dataloader)`, then `samples, _ = next(data_iter)` for a shape)."""
    code = model.code(function.node)
    counts: Dict[str, int] = {}
    for word in _NAME.findall(code):
        counts[word] = counts.get(word, 0) + 1
    bindings = len(model.assignments(name, reads[0].ctx))
    if counts.get(name, 0) != bindings + len(reads):
        return False
    nexts = [call for call in model.facts.calls_by_callee.get("next", ())
             if call.ctx.function is function and len(call.node.args) == 1]
    for read in reads:
        if any(call.node.args[0].value is read.node for call in nexts):
            continue  # `next(iter(loader))`
        held = read.assigned_to
        if held is None:
            return False
        draws = [call for call in nexts if dotted_name(call.node.args[0].value) == held]
        if any(call.ctx.loop is not None for call in draws):
            return False
        if counts.get(held, 0) != len(model.assignments(held, read.ctx)) + len(draws):
            return False
    return True


def looped_once(model: FileModel, site: CallSite) -> bool:
    """The loader, bound at the top of the file, is gone over only by loops that end in an
    unconditional `break` (`for batch in loader: ...; break` in a demo notebook's cells): one
    batch each, nothing for pinning or workers to overlap."""
    name = site.assigned_to
    if name is None or site.ctx.function is not None or passes_over(model, site):
        return False
    if any(other is not model for other, _ in loader_consumers(model, site)):
        return False
    loops = [loop for loop in model.facts.loops if any(found is site for found in loaders_iterated(model, loop)[0])]
    if not loops or not all(body_runs_once(loop) for loop in loops):
        return False
    # Named nowhere else in the file: each mention binds the name (a notebook's cells build a
    # loader under one name again and again) or heads a loop over it.
    bindings = len(model.facts.assignments.get((MODULE_SCOPE, name), ()))
    headers = sum(1 for loop in model.facts.loops if type(loop.node) is cst.For and reads_any(loop.node.iter, {name}))
    return model.shared("code-name-counts", _code_name_counts).get(name, 0) == bindings + headers


def _code_name_counts(model: FileModel) -> Dict[str, int]:
    """How often each name is read or bound in the code (comments, strings and attributes
    `x.name` left out): stricter than the text counts below, so that a notebook's commented-out
    cells do not count."""
    counts: Dict[str, int] = {}
    stack = [model.module]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            counts[node.value] = counts.get(node.value, 0) + 1
        elif type(node) is cst.Attribute:
            stack.append(node.value)
        else:
            stack.extend(children(node))
    return counts


def evaluated_now_and_then(model: FileModel, loop, short: bool = True) -> bool:
    """The loop neither trains nor sits in a loop that does, reads a few batches only (it can
    `break`: one batch, or `max_batches`), in a function the training loop calls only under a
    periodic test (`if step % eval_interval == 0: evaluate(...)`) or outside its per-step path
    (once per epoch, once after training). A full evaluation pass every few steps still copies
    every batch of its loader; with ``short`` False, such a pass counts too (a question about
    the cost of each copy, not of the loader's setup)."""
    if model.is_training_loop(loop):
        return False
    if not short and _beside_a_training_pass(model, loop):
        return True
    breaks = model.shared("loops-that-break", lambda m: {})
    if id(loop) not in breaks:
        breaks[id(loop)] = _breaks(loop.node, lambda test: _limit_off(model, test, loop))
    if model.enclosing_training_loop(loop.ctx) is not None:
        # Written inline in the training loop under a periodic test (`if it %
        # visualize_every == 0: for i, b in enumerate(vis_loader): ...; if i >= 4: break`).
        return (not short or breaks[id(loop)]) and model.guards.periodic(loop.ctx)
    if short and not breaks[id(loop)]:
        return False
    function = loop.ctx.function
    # A backward that updates nothing (an adversarial attack's input gradients, a saliency
    # map) does not make the pass a training one.
    if function is None or (model.trains(function) and (model.steps(function) or any(
            site.ctx.loop is not None and site.ctx.loop.has_step for _, site in model.callers(function)))):
        return False
    if not short and function.generator:
        return False  # a generator's loop runs where it is advanced: the training loop's steps
    if model.heat_of(function) is Heat.GATED:
        return True
    # An evaluation under `no_grad` has no heat of its own: its calls say how often it runs.
    callers = model.callers(function)
    return bool(callers) and all(_beside_training(owner, site) for owner, site in callers)


# How many helpers deep a pass may sit below the training code that calls it once
# (`prepare_real_feats` calling `stack_features`, called once before the training loop).
_ONCE_DEPTH = 3


def _beside_a_training_pass(model: FileModel, loop) -> bool:
    """The loop is a pass of its own in the body of an epoch loop, beside the pass that trains
    (`for epoch in ...: for batch in train_loader: ...; for batch in val_loader: ...`), or in a
    function that runs one epoch, after its training pass: once per epoch, not on every step.
    Not when the epoch loop's own body steps an optimizer."""
    outer = loop.parent
    if outer is None:
        # A function that runs one epoch (`fit_one_epoch`): its training pass, then a pass over
        # the validation loader, each once per call.
        function = loop.ctx.function
        return function is not None and any(
            other is not loop and other.parent is None and model.is_hot_loop(other) for other in function.loops)
    if outer.own_step or not loop.over_loader:
        return False
    return any(child is not loop and model.is_hot_loop(child) for child in outer.children)


def _beside_training(owner: FileModel, site: CallSite, depth: int = 0) -> bool:
    """The call runs under a periodic test of the training loop, or once per epoch or once
    after training in code that trains: not on every step, and not the whole job of a script
    that only evaluates (a zero-shot run over a validation set). A call in a helper outside any
    loop of it counts where every call of that helper does (a pass over the reference set that
    a setup helper runs once, before training)."""
    heat = owner.heat(site.ctx)
    if heat is not None:
        return heat is Heat.GATED
    if owner.enclosing_training_loop(site.ctx) is not None:
        return True
    caller = site.ctx.function
    if caller is None or caller.node.name.value == "main":
        # After `train(...)` at the top of a script that trains: one that steps an optimizer
        # somewhere (an attack script's backward updates nothing: its pass is its whole job).
        return owner.trains_anywhere and _steps_somewhere(owner)
    if owner.trains(caller) or owner.has_training_loop(caller):
        return True
    if depth >= _ONCE_DEPTH or site.ctx.loop is not None:
        return False
    callers = owner.callers(caller)
    return bool(callers) and all(_beside_training(o, s, depth + 1) for o, s in callers)


def _steps_somewhere(owner: FileModel) -> bool:
    return owner.shared("steps-somewhere", lambda m: any(loop.has_step for loop in m.facts.loops)
                        or any(info.direct_step for info in m.facts.functions.values()))


def _breaks(loop_node, off=lambda test: False) -> bool:
    """A `break` of this loop (not of a loop nested in it) somewhere in its body, not under an
    `if` whose test ``off`` says the run leaves false (`if max_eval_step > 0 and ...:` with
    the limit's default 0: a full pass)."""
    stack = [(node, False) for node in children(loop_node.body)]
    while stack:
        node, disabled = stack.pop()
        if type(node) is cst.Break:
            if not disabled:
                return True
            continue
        if type(node) in (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) is cst.If:
            stack.append((node.test, disabled))
            stack.append((node.body, disabled or off(node.test)))
            if node.orelse is not None:
                stack.append((node.orelse, disabled))
            continue
        stack.extend((child, disabled) for child in children(node))
    return False


def _limit_off(model: FileModel, test: cst.BaseExpression, loop) -> bool:
    """A part of the test asks whether an optional limit is set (`max_eval_step > 0`), and the
    run gives it no known positive value: a limit of that kind is off unless the user sets it,
    and the pass then goes over the whole loader."""
    parts = conjuncts(test)
    for part in parts:
        if type(part) is not cst.Comparison or len(part.comparisons) != 1:
            continue
        comparison = part.comparisons[0]
        if type(comparison.operator) is not cst.GreaterThan or type(comparison.comparator) is not cst.Integer \
                or comparison.comparator.value != "0":
            continue
        if not _set_before(model, part.left, loop):
            continue  # `if i > 0: break`: a counter of the loop, not a limit
        found = literal_values(model, part.left, loop.ctx, model.order_of(loop.node))
        if not (found.complete and found.values and all(
                type(value) in (int, float) and value > 0 for _, value in found.values)):
            return True
    return False


def _set_before(model: FileModel, expr: cst.BaseExpression, loop) -> bool:
    """A setting read in the loop that the loop does not bind: an attribute of a settings object
    (`train_config.max_eval_step`), or a name neither the loop's targets nor its body assign."""
    if type(expr) is cst.Attribute:
        return dotted_name(expr) is not None and not (dotted_name(expr) or "").startswith("self.")
    if type(expr) is not cst.Name or expr.value in loop.targets:
        return False
    return not any(a.ctx.loop is not None and a.ctx.loop.within(loop) for a in model.assignments(expr.value, loop.ctx))


def evaluation_loader_now_and_then(model: FileModel, site: CallSite) -> bool:
    """Every loop that takes batches from the loader is such an evaluation pass (a loader built
    inside `evaluate()` that the training loop runs every 500 steps)."""
    consumers = loader_consumers(model, site)
    return bool(consumers) and all(evaluated_now_and_then(other, loop) for other, loop in consumers)


def evaluated_every_few_epochs(model: FileModel, site: CallSite) -> bool:
    """Every loop that takes batches from the loader does not train, and an epoch loop makes it
    on some epochs only (`if is_power2(epoch): for x in test_loader:`)."""
    consumers = loader_consumers(model, site)
    return bool(consumers) and all(
        not other.is_training_loop(loop) and pass_every_few_epochs(other, loop) for other, loop in consumers
    )


# Keywords under which trainers take the loaders they only evaluate on.
_EVALUATION_KEYWORD = re.compile(r"^(val|valid|validation|eval|evaluation|test|dev)(_|$)", re.IGNORECASE)


def handed_for_evaluation(model: FileModel, site: CallSite) -> bool:
    """The loader is bound to a name that the file hands on only under a keyword naming an
    evaluation (`Trainer(game, opt, train_data=train_loader, validation_data=test_loader)`), and
    no loop the analysis sees trains on it: the trainer reads it in its evaluation passes."""
    name = site.assigned_to
    if not name:
        return False
    calls = calls_handing(model, site, name)
    if not calls:
        return False
    for call in calls:
        for arg in call.node.args:
            if dotted_name(arg.value) != name:
                continue
            if arg.keyword is None or not _EVALUATION_KEYWORD.search(arg.keyword.value):
                return False
    return not any(other.is_training_loop(loop) for other, loop in loader_consumers(model, site))


def read_for_a_person(model: FileModel, site: CallSite) -> bool:
    """Every loop that takes batches from the loader waits for a person on each pass (a viewer
    that shows a batch and waits for a key): loading speed is not what it waits for."""
    consumers = loader_consumers(model, site)
    return bool(consumers) and all(waits_for_user(other, loop) for other, loop in consumers)


def one_pass_beside_training(model: FileModel, site: CallSite) -> bool:
    """Every loop that takes batches from the loader runs once, beside the training rather than
    in it: a loop inside no other loop, that does not train, in a function (or at the top of a
    script) that trains in another loop. Class images generated before training, latents cached
    in one pass, a last test pass: the loader's batches are read once, not on every step."""
    consumers = loader_consumers(model, site)
    if not consumers or passes_over(model, site) or engine_runs_over(model, site):
        return False
    for other, loop in consumers:
        if loop.parent is not None or other.is_training_loop(loop):
            return False
        function = loop.function
        if function is None:
            if not _trains_at_top(other):
                return False
        elif other.heat_of(function) is not None:
            return False
        elif not other.trains(function) and not _called_once_beside_training(other, function, site):
            return False
    return True


def _trains_at_top(model: FileModel) -> bool:
    return any(model.is_training_loop(loop) for loop in model.facts.loops if loop.function is None)


def _called_once_beside_training(model: FileModel, function, loader: Optional[CallSite] = None) -> bool:
    """Every call of the function runs once, outside any loop, in code that trains in another
    loop: `test(...)` after the epoch loop of the script or of `main()`. With ``loader``, only
    the calls that hand it that loader count (`evaluate(model, test_loader)` once after
    training, while `evaluate(model, valid_loader)` runs every epoch)."""
    callers = model.callers(function)
    if loader is not None:
        handing = [(owner, site) for owner, site in callers if _hands_loader(owner, site, loader)]
        callers = handing or callers
    if not callers:
        return False
    for owner, site in callers:
        if site.ctx.loop is not None:
            return False
        caller = site.ctx.function
        if caller is None:
            if not _trains_at_top(owner):
                return False
        elif not owner.trains(caller) or owner.heat_of(caller) is not None:
            return False
    return True


def _hands_loader(owner: FileModel, site: CallSite, loader: CallSite) -> bool:
    return any(
        any(found is loader for found in loaders_held(owner, arg.value, site.ctx, site.order)[0])
        for arg in site.node.args if not arg.star
    )


def derived_batch_names(model: FileModel, site: CallSite) -> set:
    """The names holding batches where ``site`` runs: loop targets, values drawn with `next()`
    from a loader, and what derives from them."""
    return batch_names(model, site.ctx.loop)


def _mapped_moves(model: FileModel) -> List[CallSite]:
    """`text, images = map(lambda t: t.cuda(), (text, images))`: each `map` call whose function
    is a one-parameter lambda that moves its parameter to a device, over a tuple or list of
    names (the lambda's move stands for a move of each of them)."""
    def compute(model: FileModel) -> List[CallSite]:
        out: List[CallSite] = []
        for site in model.facts.calls_by_callee.get("map", ()):
            args = site.node.args
            if len(args) != 2 or any(a.keyword is not None or a.star for a in args):
                continue
            function, items = args[0].value, args[1].value
            if type(function) is not cst.Lambda or type(items) not in (cst.Tuple, cst.List):
                continue
            params = function.params
            if len(params.params) != 1 or params.posonly_params or params.kwonly_params \
                    or isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.star_kwarg is not None:
                continue
            name = params.params[0].name.value
            body = function.body
            if type(body) is not cst.Call or type(body.func) is not cst.Attribute or root_name(body.func.value) != name:
                continue
            # The walk does not go into lambdas: the body is read here.
            if moves_to_device(model, body, body.func.attr.value):
                out.append(site)
        return out

    return model.shared("mapped-moves", compute)


def _mapped_batches(model: FileModel, site: CallSite) -> bool:
    """The names a mapped move (``_mapped_moves``) goes over include a batch of its loop."""
    names = derived_batch_names(model, site)
    return any(root_name(element.value) in names for element in site.node.args[1].value.elements)


def function_moves_to_device(owner: FileModel, info, depth: int = 0) -> bool:
    """A function (of any module of the project) copies something to a device: itself, or
    through a function it calls, two calls deep (`parse_batch` calling `to_gpu(x)`)."""
    known = owner._shared.setdefault("moving-functions", {})
    key = id(info)
    if key in known:
        return known[key]
    known[key] = False  # a recursion of helpers
    found = any(s.method in ("to", "cuda", "type") and is_device_move(owner, s) for s in info.sites)
    if not found and depth < 2:
        found = any(
            function_moves_to_device(o, i, depth + 1)
            for s in info.sites if s.method not in ("to", "cuda", "type")
            for o, i in owner.calls.targets(s)
        )
    known[key] = found
    return found


def _helper_moves_batches(model: FileModel, loop=None) -> bool:
    """A call in a loop (``loop``, or any) hands a batch to a function of another module of the
    project that copies it to a device (`x, y = model.parse_batch(batch)`, whose method calls
    `to_gpu(x)` in the project's utils)."""
    for site in model.facts.calls:
        ctx_loop = site.ctx.loop
        if ctx_loop is None or (loop is not None and not ctx_loop.within(loop)):
            continue
        if site.method in ("to", "cuda", "type") or not site.node.args:
            continue
        names = derived_batch_names(model, site)
        if not any(root_name(_unwrapped(model, arg.value)) in names for arg in site.node.args):
            continue
        if any(owner is not model and function_moves_to_device(owner, info) and not _takes_to_numpy(info, site, names)
               and _moves_what_it_gets(model, owner, info, site, names)
               for owner, info in model.calls.targets(site)):
            return True
    return False


def _moves_what_it_gets(model: FileModel, owner: FileModel, info, site: CallSite, names: set) -> bool:
    """Some parameter the call hands the batch to is one the function moves (or may move): not
    only a tensor it builds itself (`mm_infer(video, ...)`, which moves `video.half()`, a new
    host tensor, and token ids it makes). ``site`` is a call of ``model``; ``info`` is
    ``owner``'s."""
    moved = owner.shared("batch-movers", _moved_parameters).get(info.key)
    if moved is None or any(a.star for a in site.node.args):
        return True
    positional = list(info.params[info.receiver_params:])
    handed = set()
    for index, arg in enumerate(site.node.args):
        if root_name(_unwrapped(model, arg.value)) not in names:  # the call is in ``model``
            continue
        if arg.keyword is not None:
            handed.add(arg.keyword.value)
        elif index < len(positional):
            handed.add(positional[index])
    return not handed or bool(handed & moved)


def _unwrapped(model: FileModel, expr: cst.BaseExpression) -> cst.BaseExpression:
    """`Variable(data["label"])`: the old autograd wrapper hands on the tensor it is given."""
    while (type(expr) is cst.Call and len(expr.args) == 1 and not expr.args[0].star
           and model.imports.qualify(expr.func) in ("torch.autograd.Variable", "torch.autograd.variable.Variable")):
        expr = expr.args[0].value
    return expr


def _takes_to_numpy(info, site: CallSite, names: set) -> bool:
    """The parameters the call hands a batch to are first turned into NumPy arrays on the host
    (`image = image.squeeze(0).cpu().numpy()` at the top of `test_single_volume(image, ...)`),
    and the others are not moved: what the helper moves are new tensors made from slices of
    them, not the batch."""
    positional_params = [*info.node.params.posonly_params, *info.node.params.params]
    params = [p.name.value for p in positional_params][info.receiver_params:]
    handed = set()
    for position, arg in enumerate(site.node.args):
        if arg.star or root_name(arg.value) not in names:
            continue
        if arg.keyword is not None:
            handed.add(arg.keyword.value)
        elif position < len(params):
            handed.add(params[position])
        else:
            return False
    if not handed:
        return False
    # Each parameter counts when the first statement that reads it turns it into NumPy.
    converted, read = set(), set()
    for statement in info.node.body.body:
        if read | converted >= handed:
            break
        pending = handed - read - converted
        if not reads_any(statement, pending):
            continue
        now = set()
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is not cst.Assign or len(small.targets) != 1:
                    continue
                target, value = small.targets[0].target, small.value
                pairs = [(target, value)]
                if type(target) is cst.Tuple and type(value) is cst.Tuple and len(target.elements) == len(value.elements):
                    pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
                for name, expr in pairs:
                    if type(name) is cst.Name and name.value in pending and _numpy_of(expr, name.value):
                        now.add(name.value)
        converted |= now
        read |= {name for name in pending - now if reads_any(statement, {name})}
    if not converted:
        return False
    # Nothing the call hands over is moved as it is (`case_name` rides along untouched).
    return not any(s.method in ("to", "cuda", "type") and root_name(s.receiver) in handed - converted
                   for s in info.sites if s.receiver is not None)


def _numpy_of(expr: cst.BaseExpression, name: str) -> bool:
    """`name....numpy()`: a call chain on ``name`` that ends in `.numpy()`."""
    if not (type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "numpy"):
        return False
    return root_name(expr) == name


def _device_from_settings(model: FileModel) -> bool:
    """A loop of the file moves values to a device read from the run's settings dict (`device =
    self.config["device"]`): the script that fills it names CUDA, this file does not. Worked out
    once per file."""
    return model.shared("device-from-settings", _settings_devices)


def _settings_devices(model: FileModel) -> bool:
    for site in model.method_calls("to"):
        if site.ctx.loop is None or not site.node.args or not is_device_move(model, site):
            continue
        value = site.node.args[0].value
        values = [value]
        if type(value) is cst.Name:
            values = [a.value for a in model.reaching(value.value, site.ctx, site.order) if a.value is not None]
        if values and all(_settings_key(v) for v in values):
            return True
    return False


def _settings_key(value: cst.BaseExpression) -> bool:
    """`config["device"]`, `self.config["device"]`: the device kept in a settings dict. (Not
    `opt.device` or `trainer.device`: an object's attribute says less about where a run puts
    its batches, and such files often run evaluations or CPU fallbacks of their own.)"""
    if type(value) is cst.Subscript and len(value.slice) == 1 and type(value.slice[0].slice) is cst.Index:
        key = value.slice[0].slice.value
        return type(key) is cst.SimpleString and isinstance(key.evaluated_value, str) and bool(
            DEVICE_NAME.search(key.evaluated_value))
    return False


def moves_batches_to_device(model: FileModel) -> bool:
    """Some loop copies its batches (or values derived from them) to a device,
    itself or by passing them to a function of the file that does (`to_device(batch, dev)`).
    Asked for every loader by each pipeline rule: worked out once per file."""
    return model.shared("moves-batches", _moves_batches)


def _moves_batches(model: FileModel) -> bool:
    movers = _movers(model)
    for site in model.method_calls("to", "cuda", "type"):
        if not is_device_move(model, site):
            continue
        if site.ctx.loop is None or _host_copy_first(model, site.receiver):
            continue
        if _drawn_then_moved(model, site.receiver):
            return True
        root = variable_inner(model, site.receiver)
        while type(root) in (cst.Attribute, cst.Subscript, cst.Call):
            root = variable_inner(model, root.func if type(root) is cst.Call else root.value)
        if not type(root) is cst.Name:
            continue
        if root.value in derived_batch_names(model, site):
            return True
    for key in movers:
        for site in model.facts.calls_by_callee.get(key, ()):
            if site.ctx.loop is None:
                continue
            names = derived_batch_names(model, site)
            if any(root_name(arg.value) in names for arg in site.node.args):
                return True
    if any(site.ctx.loop is not None and _mapped_batches(model, site) for site in _mapped_moves(model)):
        return True
    return _helper_moves_batches(model)


# Conversions that make a new tensor of a loader's float32 batch (`.float()` may hand back
# the batch itself).
_HALVING = frozenset({"half", "bfloat16"})


def _host_copy_first(model: FileModel, receiver: Optional[cst.BaseExpression]) -> bool:
    """The value moved is a new host tensor made from the batch by a conversion to a host tensor
    type (`audios.type(torch.LongTensor).to(device)`): pinned batch memory never reaches that
    copy, whatever the loader does."""
    node = receiver
    while type(node) is cst.Call and type(node.func) is cst.Attribute:
        if node.func.attr.value in _HALVING and not node.args:
            return True  # `video.half().cuda()`: a new half-precision host tensor is what is copied
        if node.func.attr.value == "type" and len(node.args) == 1:
            kind = model.imports.qualify(node.args[0].value) or ""
            if kind.startswith("torch.") and kind.endswith("Tensor") and ".cuda." not in kind and kind != "torch.Tensor":
                return True
        node = node.func.value
    return False


def _movers(model: FileModel) -> Set[str]:
    """The functions of the file that move something to a device, and those that hand one of
    their parameters on to a function that moves that parameter (`run_step(batch)` calls
    `forward_backward(batch)`, which moves slices of it), a few calls up: worked out once per
    file."""
    return set(model.shared("batch-movers", _moved_parameters))


def _moved_parameters(model: FileModel) -> Dict[str, Set[str]]:
    """{function key: the parameters it moves to a device, itself or through the functions it
    hands them to}. A move of something the function built itself (`torch.zeros(1).to(dev)`)
    moves none of them; a move of a name it binds in a way the walk does not follow (a
    comprehension's `v` in `{k: v.to(dev) for k, v in batch.items()}`) is taken to move any."""
    moved: Dict[str, Set[str]] = {}
    derived_of: Dict[int, Dict[str, set]] = {}
    for site in model.method_calls("to", "cuda", "type"):
        info = site.ctx.function
        if info is None or not is_device_move(model, site) or _host_copy_first(model, site.receiver):
            continue  # (a copy of a new host tensor made from the parameter moves none of it)
        flows = derived_of.get(id(info))
        if flows is None:
            flows = derived_of[id(info)] = _parameter_flows(model, info)
        root = root_name(site.receiver)
        found = {p for p, names in flows.items() if root in names}
        if not found and root is not None and root != "self" and not _bound_here(model, info, root):
            found = set(info.params)
        moved.setdefault(info.key, set()).update(found)
    frontier = {k for k, params in moved.items() if params}
    for _ in range(3):
        added: Dict[str, Set[str]] = {}
        for key in frontier:
            targets = moved[key]
            for site in model.facts.calls_by_callee.get(key, ()):
                info = site.ctx.function
                if info is None:
                    continue
                flows = derived_of.get(id(info))
                if flows is None:
                    flows = derived_of[id(info)] = _parameter_flows(model, info)
                handed = {root_name(arg.value) for arg in _arguments_for(site, model, key, targets)}
                found = {p for p, names in flows.items() if names & handed} - moved.get(info.key, set())
                if found:
                    added.setdefault(info.key, set()).update(found)
        if not added:
            break
        for key, params in added.items():
            moved.setdefault(key, set()).update(params)
        frontier = set(added)
    return moved


def _arguments_for(site: CallSite, model: FileModel, key: str, params: Set[str]) -> List[cst.Arg]:
    """The arguments of a call that go to the named parameters of the function ``key`` (all
    of them when the call spreads a sequence or a dict)."""
    callee = model.facts.functions.get(key)
    if callee is None or any(a.star for a in site.node.args):
        return list(site.node.args)
    positional = list(callee.params[1:] if callee.class_name is not None else callee.params)
    out = []
    for index, arg in enumerate(site.node.args):
        if arg.keyword is not None:
            if arg.keyword.value in params:
                out.append(arg)
        elif index < len(positional) and positional[index] in params:
            out.append(arg)
    return out


def _parameter_flows(model: FileModel, info) -> Dict[str, set]:
    """{parameter: the names a function's own assignments derive from it}."""
    return {p: _derived_names(model, info, p) for p in info.params if p != "self"}


def _bound_here(model: FileModel, info, name: str) -> bool:
    """``name`` is bound by an assignment of the function, or is a module-level name (`torch`)."""
    if model.facts.assignments.get((info.scope, name)):
        return True
    return model.imports.qualify(cst.Name(name)) is not None


def _drawn_then_moved(model: FileModel, receiver: Optional[cst.BaseExpression]) -> bool:
    """`next(batches).to(device)`: an item drawn from an iterator over a loader (a project
    generator, `iter(loader)`), moved as it comes."""
    node = receiver
    while type(node) in (cst.Attribute, cst.Subscript, cst.Call):
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "next":
            return bool(loaders_drawn(model, node)[0])
        node = node.func if type(node) is cst.Call else node.value
    return False


def loop_moves_batches(model: FileModel, loop) -> bool:
    """This loop copies its batches (or values derived from them) to a device, itself or by
    passing them to a function of its file that does."""
    movers = _movers(model)
    for site in model.method_calls("to", "cuda", "type"):
        if not is_device_move(model, site):
            continue
        if site.ctx.loop is None or not site.ctx.loop.within(loop) or _host_copy_first(model, site.receiver):
            continue
        if root_name(variable_inner(model, site.receiver)) in derived_batch_names(model, site) or _drawn_then_moved(
                model, site.receiver):
            return True
    for key in movers:
        for site in model.facts.calls_by_callee.get(key, ()):
            if site.ctx.loop is None or not site.ctx.loop.within(loop):
                continue
            names = derived_batch_names(model, site)
            if any(root_name(arg.value) in names for arg in site.node.args):
                return True
    if any(
        site.ctx.loop is not None and site.ctx.loop.within(loop) and _mapped_batches(model, site)
        for site in _mapped_moves(model)
    ):
        return True
    return _helper_moves_batches(model, loop)


def whole_dataset_batch(site: CallSite) -> bool:
    """`DataLoader(train_set, batch_size=len(train_set))`: one batch holds the whole dataset, a
    preload made once (then sliced on the device), not a pipeline that feeds every step. So
    does `batch_size=self.batch_size or len(self.trainset)` when no size is given (precision
    first: a run that sets one is not told)."""
    call = site.node
    dataset = call_argument(call, "dataset", 0)
    size = call_argument(call, "batch_size", 1)
    if dataset is None or size is None or dataset.star or size.star:
        return False
    value = size.value
    if type(value) is cst.BooleanOperation and type(value.operator) is cst.Or:
        value = value.right  # `batch_size=self.batch_size or len(self.trainset)`: the whole set unless one is set
    if type(value) is not cst.Call or type(value.func) is not cst.Name or value.func.value != "len" or len(value.args) != 1:
        return False
    measured = dotted_name(value.args[0].value)
    return measured is not None and measured == dotted_name(dataset.value)


def never_read(model: FileModel, site: CallSite) -> bool:
    """`dataloader_val = DataLoader(...)` and the name appears nowhere else in the file (not
    even in a comment): a loader built and never used (the evaluation indexes the dataset)."""
    name = site.assigned_to
    if not name or not name.isidentifier():
        return False
    if site.ctx.function is None and not _imported_by_nobody(model):
        return False  # a module-level name may be imported by another module
    return model.shared("name-counts", _name_counts).get(name, 0) == 1


def _imported_by_nobody(model: FileModel) -> bool:
    """A notebook, or a script no file of its project imports: its top-level names are its own."""
    if (model.path or "").endswith(".ipynb"):
        return True
    project = model.project
    return project is not None and model.real_path is not None and not project.importers(model)


def _name_counts(model: FileModel) -> Dict[str, int]:
    """How often each name appears in the file's text, attributes (`x.name`) left out."""
    text = getattr(model, "text", None) or ""
    counts: Dict[str, int] = {}
    for name in _NAME.findall(text):
        counts[name] = counts.get(name, 0) + 1
    return counts


_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _dotted_counts(model: FileModel) -> Dict[str, int]:
    """How often each dotted name of up to four parts, and each of its leading parts, appears in
    the file's text (`self.loader.dataset` counts for `self`, `self.loader` and itself). Longer
    chains count for their first four parts only, so a chain of thousands of attributes costs
    its length."""
    counts: Dict[str, int] = {}
    for match in _DOTTED.finditer(getattr(model, "text", None) or ""):
        parts = match.group(0).split(".", 4)[:4]
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            counts[prefix] = counts.get(prefix, 0) + 1
    return counts


def batches_go_to_device(model: FileModel, site: CallSite) -> bool:
    """The loader's batches are copied to a CUDA device: by a loop of this file (the file moves
    batches and uses CUDA), or by a loop of another project file that iterates this loader.
    Not a loader of one batch that holds the whole dataset (``whole_dataset_batch``), nor one
    drawn from once (``drawn_once``)."""
    if whole_dataset_batch(site) or never_read(model, site) or drawn_once(model, site) or looped_once(model, site):
        return False
    if _kept_on_host_here(model, site):
        return False
    if model.uses_cuda and moves_batches_to_device(model):
        return True
    if moves_batches_to_device(model) and model.cuda_in_project and _device_from_settings(model):
        return True
    if placed_by_framework(model, site):
        return True
    if lightning_training_loader(model, site):
        return True  # the Trainer goes over it and copies each batch to the module's device
    # A loop of another file: CUDA named there, or near it (the model module that picks the
    # device, when the loop hands each batch to `model.set_input(data)`).
    if any(
        other is not model and (other.uses_cuda or other.cuda_in_project) and loop_moves_batches(other, loop)
        for other, loop in loader_consumers(model, site)
    ):
        return True
    return any(engine_moves_batches(run) for run in engine_runs_over(model, site))


def _kept_on_host_here(model: FileModel, site: CallSite) -> bool:
    """The loader is bound to a name of a function that reads it only as the iterable of its
    own loops (not returned, not handed to a call), and none of those loops moves a batch: a
    CPU lesson's `train_ch7` beside the GPU training functions of the same helper module keeps
    its batches on the host, whatever the other loops of the file do."""
    info = site.ctx.function
    statement = model.statement_of.get(id(site.node))
    if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1:
        statement = statement.body[0]
    if info is None or type(statement) is not cst.Assign or statement.value is not site.node:
        return False
    if len(statement.targets) != 1 or type(statement.targets[0].target) is not cst.Name:
        return False
    name = statement.targets[0].target.value
    consumers = loader_consumers(model, site)
    if not consumers or any(other is not model or loop.function is not info for other, loop in consumers):
        return False
    iterables = set()
    for _, loop in consumers:
        if type(loop.node) is not cst.For:
            return False
        iterable = loop.node.iter
        if type(iterable) is cst.Call and dotted_name(iterable.func) == "enumerate" and iterable.args:
            iterable = iterable.args[0].value
        iterables.add(id(iterable))
    stack: List[cst.CSTNode] = [info.node.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name and node.value == name and id(node) not in iterables:
            if node is not statement.targets[0].target:
                return False  # read elsewhere: returned, passed on, drawn from
        stack.extend(children(node))
    return not any(loop_moves_batches(model, loop) for _, loop in consumers)


# Ignite's helpers that copy a batch (or a tensor of it) to the device they are given.
_BATCH_COPIERS = frozenset({"convert_tensor", "_prepare_batch", "prepare_batch"})


def engine_moves_batches(run: EngineRun) -> bool:
    """Each batch an Ignite engine run draws goes to a CUDA device: a supervised trainer or
    evaluator given a device that is not the CPU, or a process function that moves its batch."""
    build = run.build
    model = build.model
    if not model.uses_cuda:
        return False  # a device named nowhere as CUDA: an XLA device, say
    if build.device() is not None:
        return build.copies_to_cuda()
    info = build.process()
    if info is None or len(info.params) < 2:
        return False
    derived = _derived_names(model, info, info.params[1])
    for call in info.sites:
        if call.method in ("to", "cuda", "type"):
            if root_name(call.receiver) in derived and is_device_move(model, call):
                return True
        elif (call.qualname or dotted_name(call.node.func) or "").rsplit(".", 1)[-1] in _BATCH_COPIERS:
            if any(a.keyword is None and root_name(a.value) in derived for a in call.node.args):
                return True
    return False


def _derived_names(model: FileModel, info, name: str) -> set:
    """``name`` and the names a function's own assignments and loops derive from it (`x, y =
    batch`, `images = batch["image"]`, `for t in batch`, `{k: v for k, v in batch.items()}`),
    up to a fixed point."""
    flows = _flows(model, info)
    derived = {name}
    grown = True
    while grown:
        grown = False
        for roots, targets in flows:
            if roots.isdisjoint(derived) or targets <= derived:
                continue
            derived |= targets
            grown = True
    return derived


def _flows(model: FileModel, info) -> List[Tuple[frozenset, frozenset]]:
    """(names read, names bound from them) for each assignment and loop of a function's own
    body (the model's walk lists them): worked out once per function, since every parameter of
    every function that moves something asks (a walk per question made the language server's
    edits of large files slow)."""
    cache = model.shared("function-flows", lambda _model: {})
    flows = cache.get(id(info.node))
    if flows is not None:
        return flows
    flows = []
    for node in info.binders:
        if type(node) is cst.Assign:
            targets = set()
            for t in node.targets:
                targets |= _target_names(t.target)
            flows.append((frozenset(_read_roots(node.value)), frozenset(targets)))
        else:
            flows.append((frozenset(_read_roots(node.iter)), frozenset(_target_names(node.target))))
    cache[id(info.node)] = flows
    return flows


def _read_roots(expr: cst.CSTNode) -> set:
    out = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            out.add(node.value)
        elif type(node) is cst.Attribute:
            stack.append(node.value)  # `batch.x` reads `batch`, not a name `x`
        elif type(node) is cst.Call and "tokeniz" in (dotted_name(node.func) or "").lower():
            continue  # `tokenizer(prompt, ...)`: new id tensors made from text, none of the batch's memory
        else:
            stack.extend(children(node))
    return out


def _target_names(target: cst.BaseExpression) -> set:
    if type(target) is cst.Name:
        return {target.value}
    if type(target) in (cst.Tuple, cst.List):
        out = set()
        for element in target.elements:
            out |= _target_names(element.value)
        return out
    return set()


def built_on_device(model: FileModel, expr: cst.BaseExpression, site: CallSite, depth: int = 0) -> bool:
    """The expression makes or moves tensors onto a GPU (`.cuda()`, `.to(dev)`, `device="cuda"`)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in ("cuda", "to") and node.args:
                first = node.args[0].value
                if not (type(first) is cst.SimpleString and "cpu" in first.value):
                    return True
            if type(func) is cst.Attribute and func.attr.value == "cuda":
                return True
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "device":
                    value = arg.value
                    if not (type(value) is cst.SimpleString and "cpu" in value.value):
                        return True
        if type(node) is cst.Name and depth < 2:
            for assignment in model.assignments(node.value, site.ctx):
                if assignment.value is not None and built_on_device(model, assignment.value, site, depth + 1):
                    return True
        elif not type(node) is cst.Name:
            stack.extend(children(node))
    return False


def index_batches(model: FileModel, site: CallSite) -> bool:
    """`DataLoader(range(n), batch_size)`: each batch is a small tensor of indices (a
    permutation's slice for full-graph training), which picks rows of tensors already placed;
    pinning it saves nothing worth a finding."""
    arg = call_argument(site.node, "dataset", 0)
    if arg is None or type(arg.value) is not cst.Call:
        return False
    func = arg.value.func
    return type(func) is cst.Name and func.value == "range" and model.bindings.function("range", site.ctx, site.order) is None


def dataset_on_device(model: FileModel, site: CallSite) -> bool:
    """`DataLoader(TensorDataset(x_gpu, y_gpu))`: nothing to pin (pinning needs CPU tensors)."""
    arg = call_argument(site.node, "dataset", 0)
    if arg is None:
        return False
    dataset = arg.value
    if type(dataset) is cst.Name:
        found = model.assignments(dataset.value, site.ctx)
        if len(found) != 1 or found[0].value is None:
            return False
        dataset = found[0].value
    if not type(dataset) is cst.Call or not (dotted_name(dataset.func) or "").endswith("TensorDataset"):
        return False
    return any(built_on_device(model, a.value, site) for a in dataset.args)


def tensors_of_unknown_place(model: FileModel, site: CallSite) -> bool:
    """`DataLoader(TensorDataset(features, labels))` where a tensor is not known to be in host
    memory (the output of a feature-extraction helper, which may gather on the GPU): pinning
    such a dataset may fail, and its batches are slices of memory already filled. Also a
    TensorDataset that a helper of the project builds and returns."""
    found = tensor_datasets(model, site)
    if not found:
        return False
    for owner, dataset, ctx, order in found:
        parts = [a.value for a in dataset.args if a.keyword is None and not a.star]
        if parts and not all(is_host_tensor(owner, part, ctx, order) for part in parts):
            return True
    return False


def _is_tensor_dataset(value) -> bool:
    return type(value) is cst.Call and (dotted_name(value.func) or "").endswith("TensorDataset")


def tensor_datasets(model: FileModel, site: CallSite) -> List[Tuple[FileModel, cst.Call, Context, float]]:
    """The `TensorDataset(...)` calls the loader's dataset is, with where each is made: the
    argument itself, through one assignment, or every value a helper of the project returns
    (`balanced = make_feature_set(...)`, whose `return TensorDataset(feats, targets)`). Empty
    when the dataset is anything else on some path."""
    value = dataset_value(model, site)
    if _is_tensor_dataset(value):
        return [(model, value, site.ctx, site.order)]
    index = None
    if type(value) is cst.Name:
        # `train_data, _ = get_tensor_data(mode, features)`: one item of what a helper returns
        value, index = _unpacked_call(model, value, site)
    if type(value) is not cst.Call:
        return []
    found = model.values.callee(value, site.ctx, site.order)
    if found is None:
        return []
    owner, info = found
    out = []
    for ret in info.return_sites:
        made = ret.value
        if index is not None:
            if type(made) is not cst.Tuple or index >= len(made.elements) or type(made.elements[index]) is not cst.Element:
                return []
            made = made.elements[index].value
        if type(made) is cst.Name:
            bound = owner.reaching(made.value, ret.ctx, ret.order)
            if len(bound) != 1 or bound[0].index is not None:
                return []
            made, where = bound[0].value, bound[0]
        else:
            where = ret
        if not _is_tensor_dataset(made):
            return []
        out.append((owner, made, where.ctx, where.order))
    return out


def literal_int(expr: Optional[cst.BaseExpression]) -> Optional[int]:
    if type(expr) is cst.Integer:
        return int(expr.evaluated_value)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = expr.expression
        return -int(inner.evaluated_value) if type(inner) is cst.Integer else None
    return None


def loader_option(model: FileModel, site: CallSite, keyword: str, position: Optional[int]) -> Option:
    """A DataLoader argument as the loader receives it where its batches go to the GPU: given in
    the call, or in a `**kwargs` dict (a key added under `if use_cuda:` counts as there). A loader
    factory (`idist.auto_dataloader(ds, **kwargs)`) takes its options by keyword only."""
    if loader_factory(site) is not None:
        position = None
    return call_option(model, site, keyword, position, path="cuda")


def _unpacked_call(model: FileModel, name: cst.Name, site: CallSite):
    """(the call, the item's position) for a name bound once by unpacking a call's result
    (`train_data, _ = get_tensor_data(...)`); (the name, None) otherwise."""
    found = model.assignments(name.value, site.ctx)
    if len(found) == 1 and found[0].index is not None and type(found[0].value) is cst.Call:
        return found[0].value, found[0].index
    return name, None


def dataset_value(model: FileModel, site: CallSite) -> Optional[cst.BaseExpression]:
    """The dataset argument, through one plain assignment (`ds = MyDataset(...)`, or one item
    of a tuple assigned element by element: `train_set, valid_set = TensorDataset(*a),
    TensorDataset(*b)`)."""
    arg = call_argument(site.node, "dataset", 0)
    if arg is None:
        return None
    value = arg.value
    if type(value) is cst.Name:
        found = model.assignments(value.value, site.ctx)
        if len(found) != 1 or found[0].value is None:
            return value
        bound = found[0]
        if bound.index is None:
            return bound.value
        if type(bound.value) in (cst.Tuple, cst.List) and bound.index < len(bound.value.elements) \
                and type(bound.value.elements[bound.index]) is cst.Element:
            return bound.value.elements[bound.index].value
        return value
    return value


# Libraries whose datasets are iterable pipes (torchtext's datasets are datapipes, webdataset's
# shards stream): workers duplicate every sample unless the pipe is sharded among them.
_ITERABLE_LIBRARIES = ("torchtext.datasets.", "torchdata.", "webdataset.", "datasets.IterableDataset")


def library_stream(model: FileModel, site: CallSite) -> bool:
    """The dataset comes from a library whose datasets are iterable pipes
    (`torchtext.datasets.Multi30k(...)`): adding workers without sharding repeats samples."""
    value = dataset_value(model, site)
    return type(value) is cst.Call and (model.imports.qualify(value.func) or "").startswith(_ITERABLE_LIBRARIES)


def iterable_dataset(model: FileModel, site: CallSite) -> bool:
    """The dataset is built from a class of this file, or of another module of the project
    (`from lit_llama.packed_dataset import CombinedDataset`), that derives from `IterableDataset`."""
    value = dataset_value(model, site)
    if type(value) is cst.Name and annotated_kind(model.values, value.value, site.ctx, site.order) == "iterable-dataset":
        return True  # `def run_training(self, dataset: IterableDataset, ...)`
    if not type(value) is cst.Call:
        return False
    owner, name = model, dotted_name(value.func)
    qual = model.imports.qualify(value.func)
    if qual is not None:
        symbol = model.symbol(qual)
        if symbol is None or symbol.kind != "class":
            return False
        owner, name = symbol.model, symbol.info.name
    seen = set()
    while name is not None and name not in seen:
        seen.add(name)
        info = owner.facts.classes.get(name.rsplit(".", 1)[-1])
        if info is None:
            return False
        if any(base.rsplit(".", 1)[-1] == "IterableDataset" for base in info.bases):
            return True
        parents = [b for b in info.bases if b.rsplit(".", 1)[-1] in owner.facts.classes]
        name = parents[0] if parents else None
    return False
