"""GPU204 `workers-restarted-every-epoch`: DataLoader with workers iterated every epoch without `persistent_workers=True`."""

from __future__ import annotations
import re
from typing import Dict, Iterator, Optional
import libcst as cst
from advisor.model.legacy_autograd import written_for_old_torch
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.cli_options import defaults_by_name
from advisor.model.file_model import call_argument
from advisor.model.literals import LITERALS
from advisor.model.guards import at_most_one_round
from advisor.model.names import dotted_name
from advisor.model.value_flow import argument
from advisor.model.walk import children
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.model.loaders import (
    LoaderSites, iterates_itself, loader_calls, loader_consumers, loaders_held, loaders_iterated, placed_by_framework,
)
from advisor.model.call_options import ABSENT, PRESENT
from advisor.model.passes import describe, passes_over
from advisor.model.engine_runs import engine_runs_over
from advisor.model.epoch_passes import inside_loops, pass_every_few_epochs
from advisor.rules.pipeline.loader_flow import batches_go_to_device, loader_option
from advisor.rules.pipeline.loader_literals import loader_options
from advisor.model.vocabulary import PLACEMENT_TEXT
from advisor.model.lightning_loaders import lightning_reloads_loaders, lightning_training_loader


def _worker_counts(model: FileModel, site: CallSite):
    """`num_workers` as the loader gets it on the GPU path (absent means 0): (the ints it may be,
    the option whose default gives them, the argument in the call, the setting it is read from);
    None when not known. A count read from a worker setting the program does not hold
    (`config["num_workers"]` of a YAML file) is taken as some workers, unless a path gives 0."""
    option = loader_option(model, site, "num_workers", 5)
    if option.state == ABSENT:
        return (0,), None, None, None
    if option.state != PRESENT:
        return None
    found = option.literals
    counts = found.ints()
    if counts:
        return counts, found.option, option.arg, None
    by_name = _option_by_name(model, option.arg)
    if by_name is not None:
        return by_name
    settings = sorted(found.settings)
    if (
        not found.covered or not settings or not all(_WORKER_SETTING.search(name) or name.endswith("cpu_count()") for name in settings)
        or any(kind != "int" or value <= 0 for kind, value in found.values)
    ):
        return None
    return tuple(sorted(value for _, value in found.values)) or None, found.option, option.arg, settings[0]


def _option_by_name(model: FileModel, arg):
    """`num_workers=int(self.opts.workers)` where the parse result reaches the loader through an
    object the value flow does not follow (an options class of another module builds the
    parser): the defaults of every option of that name around the file, with the values the
    shipped commands pass, when nothing sets the attribute (`defaults_by_name`)."""
    value = arg.value if arg is not None else None
    if type(value) is cst.Call and dotted_name(value.func) == "int" and len(value.args) == 1:
        value = value.args[0].value
    if type(value) is not cst.Attribute or not _WORKER_SETTING.search(value.attr.value):
        return None
    if (dotted_name(value.value) or "").rsplit(".", 1)[-1] not in _PARSE_RESULTS:
        return None  # `cfg.workers` of a config loaded from a file: not the option of that name
    found = defaults_by_name(model, value.attr.value, LITERALS, launched=True)
    counts = found.ints() if found is not None and found.complete else ()
    return (counts, found.option, arg, None) if counts else None


# The names a script gives the result of parsing its command line.
_PARSE_RESULTS = frozenset({"args", "opts", "opt", "options", "flags"})

# A setting that holds a worker count by its name: `num_workers`, `NUM_WORKERS`, `workers`, `n_worker`.
_WORKER_SETTING = re.compile(r"(?i)(^|_)workers?$")


def _count_text(counts) -> str:
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"


def _loop_is_one_epoch(model, loop) -> bool:
    """`for epoch in range(1):`, or `range(args.epochs)` with `--epochs` at 1 in every shipped run."""
    return at_most_one_round(model, loop)


def _all_loaders(found) -> tuple:
    """The loaders, when every path of the value is one of them."""
    sites, exhaustive = found
    return sites if exhaustive else ()


def _epoch_callers(model: FileModel, info, epoch_ids, depth: int = 0) -> Optional[dict]:
    """Call sites through which a function runs once per epoch: {id(function): [call sites]}
    for the chain of helpers from an epoch loop down to ``info`` (None when none does)."""
    if info is None or depth > 2:
        return None
    chosen = []
    chains: dict = {}
    for site in model.call_sites(info):
        if model.guards.periodic(site.ctx):
            continue  # `if epoch % 5 == 0: evaluate(val_loader)`: every few epochs only
        if inside_loops(site.ctx.loop, epoch_ids):
            chosen.append(site)
        elif site.ctx.loop is None and site.ctx.function is not None:
            outer = _epoch_callers(model, site.ctx.function, epoch_ids, depth + 1)
            if outer:
                chosen.append(site)
                chains.update(outer)
    if not chosen:
        return None
    chains[id(info)] = chosen
    return chains


class _Restart:
    """A loader with workers that are not kept between passes: the worker counts it may have
    (None when read from a setting the program does not hold), the option they default from, the
    setting they are read from, and the `num_workers` argument."""

    __slots__ = ("counts", "default_of", "setting", "workers_arg")

    def __init__(self, counts, default_of, workers_arg, setting) -> None:
        self.counts = counts
        self.default_of = default_of
        self.workers_arg = workers_arg
        self.setting = setting

    def phrase(self, data: dict) -> str:
        """The worker processes as the message names them; fills ``data`` with their fields."""
        if self.counts is not None:
            data.update(workers=self.counts[0], count=_count_text(self.counts),
                        processes="process" if self.counts == (1,) else "processes")
            text = "{count} worker {processes}"
        else:
            text = "its worker processes"
        if self.default_of is not None:
            data["default_of"] = self.default_of
            text += " (the default of `{default_of}`)"
        elif self.setting is not None:
            data["setting"] = self.setting
            if self.setting.endswith("cpu_count()"):
                text += " (`num_workers` is `{setting}`, the machine's core count)"
            elif self.counts is not None:
                text += " (unless the setting `{setting}` gives another count)"
            else:
                text += " (`num_workers` read from the setting `{setting}`)"
        return text


def _restarting_workers(model: FileModel, site: CallSite) -> Optional[_Restart]:
    """A loader with workers that are not kept between passes; None otherwise."""
    found = _worker_counts(model, site)
    if found is None or (found[0] is not None and found[0][0] <= 0):
        return None
    if loader_option(model, site, "persistent_workers", None).state != ABSENT:
        return None
    if _dataset_changed_between_passes(model, site):
        return None
    return _Restart(*found)


def _subset_of_the_pass(model: FileModel, site: CallSite) -> bool:
    """The loader goes over a subset its builder picks at the time (`DataLoader(Subset(dataset,
    idx))`, with `idx` from this epoch's losses): each new loader holds other samples, so there
    is nothing to keep between passes."""
    dataset = call_argument(site.node, "dataset", 0)
    if dataset is None:
        return False
    value = dataset.value
    if type(value) is cst.Name:
        binding = model.sole_assignment(value.value, site.ctx, site.order)
        if (binding is None or binding.value is None or binding.index is not None
                or binding.ctx.function is not site.ctx.function):
            return False
        value = binding.value
    if type(value) is not cst.Call:
        return False
    qual = model.imports.qualify(value.func) or dotted_name(value.func) or ""
    if qual.rsplit(".", 1)[-1] != "Subset":
        return False
    indices = call_argument(value, "indices", 1)
    return indices is not None and type(indices.value) not in (cst.List, cst.Tuple, cst.Integer)


def _dataset_changed_between_passes(model: FileModel, site: CallSite) -> bool:
    """A loop sets an attribute of the loader's dataset (`gen.dataset.epoch_now = epoch`,
    `train_dataset.mosaic = False`) or calls one of its `set_*` methods: each pass's fresh
    workers take a new copy of the dataset with it, which persistent workers would not."""
    changed = model.shared("gpu204-changed-in-loops", _changed_in_loops)
    if site.assigned_to and site.assigned_to + ".dataset" in changed:
        return True
    dataset = call_argument(site.node, "dataset", 0)
    name = dotted_name(dataset.value) if dataset is not None else None
    return name is not None and name in changed


def _changed_in_loops(model: FileModel) -> set:
    """Every dotted prefix of an attribute a loop stores (`a.b.c = v`: `a`, `a.b`), or a function
    stores through a loader (`loader.dataset.offset = v`), and every
    receiver of a `set_*` method a loop calls (not a sampler's): computed once per file."""
    out: set = set()
    for (_, target), found in model.facts.assignments.items():
        # In a loop, or, through the loader (`loader.dataset.offset = ...`), in a function: a
        # helper the epoch loop calls (`train()` drawing a new offset into the dataset first).
        if "." in target and any(a.ctx.loop is not None or (".dataset." in target and _called_in_loops(model, a.ctx.function))
                                 for a in found):
            parts = target.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts)))
    datasets = None  # names of the file's loaders' datasets, found on the first method call in a loop
    for call in model.facts.calls:
        if call.ctx.loop is None or call.method is None or call.receiver is None:
            continue
        receiver = dotted_name(call.receiver)
        if receiver is None or receiver.endswith("sampler"):
            continue
        if call.method.startswith("set_"):
            parts = receiver.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
            continue
        if datasets is None:
            datasets = _dataset_names(model)
        # A method of the project that stores an attribute of a loader's dataset
        # (`train_dataset.generate_offset()` drawing new window offsets each epoch): only those
        # receivers are followed into the call graph.
        if receiver in datasets and any(_mutates(owner, info) for owner, info in model.calls.targets(call)):
            parts = receiver.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return out


def _dataset_names(model: FileModel) -> set:
    """The names the file's loaders know their datasets by: the `dataset` argument, and
    `loader.dataset`."""
    out = set()
    for site in loader_calls(model):
        dataset = call_argument(site.node, "dataset", 0)
        name = dotted_name(dataset.value) if dataset is not None else None
        if name is not None:
            out.add(name)
        if site.assigned_to:
            out.add(site.assigned_to + ".dataset")
    return out


def _mutates(owner: FileModel, info) -> bool:
    """The method stores an attribute of its object, or hands the call on to the parts it holds
    (`for d in self.datasets.values(): d.generate_offset()`) where a class of its file defines
    that method so."""
    stores, storing_names = _self_storing(owner)
    if id(info) in stores:
        return True
    return any(site.method in storing_names and site.receiver_name not in ("self", "cls") for site in info.sites)


def _self_storing(model: FileModel):
    """The methods of the file that store an attribute of `self`: their ids, and their names
    (once per file)."""
    def build(m):
        functions = [a.ctx.function for (_, target), found in m.facts.assignments.items()
                     if target.startswith("self.") for a in found if a.ctx.function is not None]
        return {id(f) for f in functions}, {f.node.name.value for f in functions if f.class_name}
    return model.shared("self-storing-methods", build)


def _epochs(model: FileModel) -> set:
    return model.shared("gpu204-epochs", lambda m: {id(e) for e in m.epoch_loops() if not _loop_is_one_epoch(m, e)})


def _project_epoch_callers(model: FileModel, info, depth: int = 0) -> Optional[dict]:
    """`_epoch_callers` through the calls of every project file, as (file, call site) pairs:
    `train_one_epoch(...)` defined here and called by the epoch loop of the entry script that
    imports it."""
    if info is None or depth > 2:
        return None
    chosen = []
    chains: dict = {}
    for caller, site in model.callers(info):
        if (id(site.ctx.loop) in _epochs(caller) and caller.guards.periodic(site.ctx)
                and not caller.guards.every_pass_by_default(site.ctx)):
            # `if epoch % 20 == 0: validate(...)` in the epoch loop: every few epochs only. In a
            # step loop (`if step % eval_every == 0:`) it may come round more often than that.
            continue
        if inside_loops(site.ctx.loop, _epochs(caller)):
            chosen.append((caller, site))
        elif site.ctx.loop is None and site.ctx.function is not None:
            outer = _project_epoch_callers(caller, site.ctx.function, depth + 1)
            if outer:
                chosen.append((caller, site))
                chains.update(outer)
    if not chosen:
        return None
    chains[id(info)] = chosen
    return chains


def _per_epoch(model: FileModel, loop, site: CallSite) -> bool:
    """``loop`` of ``model`` goes over the loader ``site`` (and nothing else) once per epoch of an
    epoch loop of that file, or of another project file that calls its function. A `while`
    loop counts only through a wrapper it draws from (`while input is not None: input, target
    = prefetcher.next()`)."""
    if type(loop.node) not in (cst.For, cst.While):
        return False
    epochs = _epochs(model)
    if type(loop.node) is cst.While and epochs and inside_loops(loop.parent, epochs):
        return False
    if epochs and inside_loops(loop.parent, epochs):
        if _built_before_pass(site, loop):
            return False  # a new loader each time round: keeping its workers would not carry over
        return any(found is site for found in _all_loaders(loaders_iterated(model, loop)))
    if loop.parent is not None or loop.function is None:
        return False
    callers = _epoch_callers(model, loop.function, epochs) if epochs else None
    question = LoaderSites(callers) if callers else None
    if question is None:
        chains = _project_epoch_callers(model, loop.function)
        if chains and (_rebuilt_by_callers(loop, chains) or _built_by_the_pass(site, loop)):
            return False
        question = LoaderSites(project_callers=chains) if chains else None
    if question is None:
        return False
    if any(found is site for found in _all_loaders(loaders_iterated(model, loop, question))):
        return True
    return _drawn_afresh(model, loop, site, question)


def _drawn_afresh(model: FileModel, loop, site: CallSite, question) -> bool:
    """The loop draws the loader's batches (`samples, targets = prefetcher.next()`) from an
    iterator or a wrapper the function builds once before it (`prefetcher =
    data_prefetcher(data_loader, device)`): each call, once per epoch, starts a new pass."""
    return any(found is site for found in _afresh_loaders(model, loop, question))


def _afresh_loaders(model: FileModel, loop, question) -> Iterator[CallSite]:
    """The loaders ``loop`` draws from through an iterator or wrapper its function builds once
    before it (see `_drawn_afresh`)."""
    for name, call in loop.drawn.items():
        draw = model.site_of(call)
        iterator = model.values.drawn_from(call, draw.ctx, draw.order) if draw is not None else None
        if type(iterator) is not cst.Name:
            continue
        reach = model.bindings.reaching(iterator.value, draw.ctx, draw.order)
        if not reach.closed or reach.parameter is not None or len(reach.assignments) != 1:
            continue
        bound = reach.assignments[0]
        if (type(bound.value) is not cst.Call or bound.ctx.function is not loop.function
                or bound.ctx.loop is not None or bound.index is not None):
            continue
        # The wrapper may hold other things beside the loader (a device, a flag): the loader
        # being among what it is built from is enough.
        yield from model.values.ask(question, iterator, draw.ctx, draw.order)[0]


def _rebuilt_by_callers(loop, chains: dict) -> bool:
    """The loop goes over a parameter of its function, and every call of that function on the
    way down from an epoch loop sits in a helper (not in the epoch loop itself) that binds the
    argument from a call of its own (`data_loader = init_pipe(False)[2]`, unpacked or not): each
    epoch runs the helper, which builds a new loader, so persistent workers would not carry
    over (`val_run()` once per epoch, building its loaders and going over each once)."""
    info = loop.function
    iterated = loop.node.iter
    if type(iterated) is cst.Call and type(iterated.func) is cst.Name and iterated.func.value == "enumerate" and iterated.args:
        iterated = iterated.args[0].value
    if type(iterated) is not cst.Name or iterated.value not in info.params:
        return False
    name = iterated.value
    position = info.params.index(name) - (1 if info.receiver_params else 0)
    calls = chains.get(id(info))
    if not calls:
        return False
    for caller, site in calls:
        if site.ctx.loop is not None or site.ctx.function is None:
            return False
        given = argument(site.node, name, position)
        if given is None or type(given.value) is not cst.Name:
            return False
        reach = caller.bindings.reaching(given.value.value, site.ctx, site.order)
        if not reach.closed or not reach.assignments or any(
            a.ctx.function is not site.ctx.function or type(a.value) is not cst.Call for a in reach.assignments
        ):
            return False
    return True


def _built_by_the_pass(site: CallSite, loop) -> bool:
    """The function that goes over the loader builds it into a local name first
    (`def compute_eval_metrics(...): data_loader = DataLoader(...); for batch in data_loader:`):
    each call goes over a new loader, so persistent workers would not carry over."""
    return (site.ctx.function is loop.function and site.ctx.loop is None and not site.ctx.conditional
            and bool(site.assigned_to) and "." not in site.assigned_to)


def _built_before_pass(site: CallSite, loop) -> bool:
    """The loader is built in the block that holds the loop going over it, so each pass goes over
    a new loader (`if step % 500 == 0: db_test = DataLoader(...); for x in db_test: ...`):
    persistent workers would not carry over. A loader built once under a latch and gone over in
    later epochs is not."""
    ctx = getattr(loop, "ctx", None)
    while ctx is not None:
        if ctx is site.ctx:
            return site.ctx.loop is not None
        ctx = ctx.outer
    return False


def _comprehension_iters(body: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    stack = [body]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) is cst.CompFor:
            yield node.iter
        stack.extend(children(node))


class WorkersRestartedEveryEpoch(Rule):
    code = "GPU204"
    name = "workers-restarted-every-epoch"
    summary = "DataLoader with workers iterated every epoch without `persistent_workers=True`"
    what = """
        A `DataLoader(...)` (or a project subclass, also called through a name that picks one,
        `loader = DataLoader if weighted else InfiniteDataLoader`) whose `num_workers` is known
        to be above 0 and that gets no `persistent_workers`, iterated inside an epoch loop (a loop that runs a whole training
        loop per iteration), directly or through a helper that the epoch loop calls (also when
        the loader is built by a helper in another module of the project, or the epoch loop
        hands it to a function of another module that goes over it, also through a generator of
        the project such as a progress logger's `log_every(loader, ...)`); or built inside the
        epoch loop. One-epoch scripts are left alone, and so is a helper's pass made only every
        few epochs (`if epoch % 5 == 0: run_pass(val_loader)`); a loop of the epoch loop
        that goes over the loader only under such a test is information (also a few loops deep, and
        also when the loop is in another file than the loader; `if epoch in [10, 30, 100]:` and a
        power-of-two test, `n & (n - 1) == 0` in a helper, count) (not a test whose
        interval is 1 unless the run asks otherwise: `% args.eval_interval` with a default of 1
        holds every epoch). The worker count may be written
        in the call, in a `**kwargs` dict built in steps (a key added under `if use_cuda:`
        counts), in a variable, a parameter's callers or default, a settings object
        (`SimpleNamespace`, a dataclass, a dict of settings), or be the default of a
        command-line option (`parser.add_argument("--workers", default=8)`) or of a yacs config
        node (`_C.DATA_LOADER.NUM_WORKERS = 8`): what runs unless the user passes another value,
        and the message names the option. A count read from a setting the program does not hold,
        named as a worker count (`config["num_workers"]` of a dict loaded from a YAML file,
        `config.data.num_workers` of a nested settings object, `hp.get("workers", 6)`), is taken
        as some workers unless a path gives 0 (real settings files set several), and the message
        names the setting; an option cut to each process's share, rounded up (`args.workers =
        int((args.workers + ngpus - 1) / ngpus)`), is 1 to the option's count; so is `os.cpu_count()` (the machine's core count, never 0), but not a
        share of it such as `os.cpu_count() // 8`; a plain `args.workers` whose parser is out of
        sight is not (its default may be 0).
        Passes that start again without an epoch loop count too: an endless generator that goes
        over the loader in its `while True:` loop, and an `iter(loader)` made again in a
        training loop (each step, each epoch, or when `next(...)` raised `StopIteration`); one
        made only every few steps (`if step % 500 == 0: sample_images()` peeking at a batch
        with `next(iter(val_loader))`) is info. So does a function the epoch loop calls that
        builds a prefetching wrapper over the loader first and draws from it in its `while`
        loop (`prefetcher = data_prefetcher(train_loader)`, then `while input is not None:
        input, target = prefetcher.next()`): each call starts a new pass.
        `itertools.cycle(loader)` (one pass, replayed) and a single `next(iter(loader))` to look
        at a batch are left alone. A PyTorch Ignite `engine.run(loader, max_epochs=N)` with N
        above 1 goes over the loader once per epoch; without `max_epochs` it runs one epoch, and
        with a literal `epoch_length` it draws on from the same iterator: both are left alone.
        A loader built by Ignite's `idist.auto_dataloader(dataset, num_workers=N, ...)` counts as
        a `DataLoader(...)` call: it builds one from the keywords it is given. A Lightning
        `Trainer` goes over the loader its training-data hook returns once per epoch (as for
        GPU201), unless the run asks it to build its loaders again
        (`reload_dataloaders_every_n_epochs`). A loader whose
        dataset a loop changes (`gen.dataset.epoch_now = epoch`, `train_set.set_scale(s)`, or a
        method of the project that stores an attribute of it, `train_dataset.generate_offset()`,
        or a function the epoch loop calls that sets it through the loader,
        `train_loader.dataset.offset = ...`) is left alone: fresh workers each pass are how the change reaches them. A loader handed
        to `accelerator.prepare(...)` counts in a script that never names CUDA: Accelerate
        places its batches on the GPU, and the loader it hands back starts the same workers
        on each pass (it adds no `persistent_workers`). A loader built only under a switch no
        run of the project turns on (`if cfg.MULTIGRID.SHORT_CYCLE:` whose default is False
        and that no config file sets) is info. A loader built in the block that goes over it
        (`if step % 500 == 0: test_loader = DataLoader(...); for x in test_loader: ...`) is a
        new loader on each pass: keeping its workers would not carry over, so it is left alone;
        so is one a per-epoch helper builds for itself and goes over, or hands to the function that
        goes over it once (`def val_run(encoder): data_loader = make_eval_loader(); return score(encoder,
        data_loader)`, called once per epoch from another file). A loader built each epoch over
        the samples that epoch picks (`DataLoader(Subset(dataset, idx))`, `idx` from this epoch's
        losses) holds other data each time: nothing to keep. A loop each of whose rounds calls a
        function that builds its own optimizer and trains with it (`for task in range(n):
        main(opts)`) runs whole trainings, not epochs. A file written for a torch older than
        1.0 (Python 2, `async=True`, losses read as `loss.data[0]`) is left alone: the option
        came with torch 1.7.
        An epoch loop that runs at most once (`range(1)`, or `range(args.epochs)` where
        `--epochs` defaults to 1 and no shipped launch script or documented command passes more;
        `range(1, epochs + 1)` counts `epochs` rounds, so a notebook's `train(epochs=1)` is one)
        reuses nothing. A subclass that keeps one stream of batches for the whole run (`self.iterator =
        super().__iter__()`, drawn from by its own `__iter__`, as YOLO's `InfiniteDataLoader`)
        starts its workers once and is left alone.
    """
    why = """
        Each `for batch in loader` starts the worker processes afresh and shuts them down at
        the end of the pass. Every epoch then pays for starting processes, copying or
        re-importing the dataset into them, and refilling the prefetch queue, while the GPU
        waits for the first batches; with the `spawn` start method this can take seconds.
        Persistent workers are started once and kept between passes.
    """
    example = """
        loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8)
        for epoch in range(epochs):
            for x, y in loader:
                train_step(x, y)
    """
    instead = """
        loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True)
        for epoch in range(epochs):
            for x, y in loader:
                train_step(x, y)
    """
    hint = (
        "pass `persistent_workers=True` (not when the dataset changes between epochs: persistent "
        "workers keep their own copy)"
    )
    fixable = Fixable.SOMETIMES_UNSAFE
    fix_safety = """
        The fix adds `persistent_workers=True`. Always offered as unsafe, because the workers
        then live for the whole run:

        - each worker keeps the copy of the dataset it started with, so a dataset changed between
          epochs (curriculum, resampling, a new augmentation setting) is not seen by them;
        - a `worker_init_fn` runs once per worker instead of once per epoch;
        - the workers and their memory stay alive between passes, during evaluation too.

        When the worker count is the default of a command-line option, the run may ask for
        none, and `persistent_workers=True` without workers raises `ValueError`: the fix then
        writes `persistent_workers=<the count> > 0`, and is not offered when the count comes
        through a `**kwargs` dict.

        Not offered for a loader built inside the epoch loop: it has to move out of the loop
        first, which is a change of structure the author should make.
    """
    references = (
        (
            "torch.utils.data.DataLoader (`persistent_workers`)",
            "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader",
        ),
        (
            "torch/utils/data/dataloader.py",
            "https://github.com/pytorch/pytorch/blob/main/torch/utils/data/dataloader.py",
        ),
    )
    requires = (("DataLoader", "auto_dataloader"), ("backward", ".step(", "create_supervised_trainer", "train_dataloader"),
                PLACEMENT_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        if written_for_old_torch(model):
            return  # `persistent_workers` came with torch 1.7
        for report in self._reports(model):
            site = model.loader_site(report.node) or model.site_of(report.node)
            if site is not None and iterates_itself(model, site):
                continue  # `InfiniteDataLoader` keeps one stream of batches across passes
            yield report

    def _reports(self, model: FileModel) -> Iterator[Report]:
        # Like every input-pipeline rule: only where a GPU waits for the batches.
        reported = set()
        # Where a framework places the batches (`accelerator.prepare(loader)`), the GPU waits
        # for them whether or not the file names CUDA.
        placed = None if model.uses_cuda else {
            id(site.node) for site in loader_calls(model) if placed_by_framework(model, site)
        }
        if placed is None or placed:
            for report in self._epoch_loops(model, placed):
                reported.add(id(report.node))
                yield report
        if model.cuda_in_project:
            for report in self._epoch_loops_elsewhere(model, reported):
                reported.add(id(report.node))
                yield report
            for report in self._hidden_passes(model, reported):
                reported.add(id(report.node))
                yield report
            yield from self._engine_runs(model, reported)
        yield from self._lightning_epochs(model, reported)

    def _lightning_epochs(self, model: FileModel, reported: set) -> Iterator[Report]:
        """Loaders a Lightning `Trainer` goes over once per epoch: what the training-data hook
        returns (`model/lightning_loaders.py`), unless the run rebuilds them every few epochs."""
        for site in loader_calls(model):
            if id(site.node) in reported or not lightning_training_loader(model, site):
                continue
            if lightning_reloads_loaders(model):
                return  # `reload_dataloaders_every_n_epochs`: new loaders, new workers anyway
            yield from self._restart(model, site, "for every epoch the Lightning `Trainer` runs", {}, [])

    def _engine_runs(self, model: FileModel, reported: set) -> Iterator[Report]:
        """Loaders an Ignite engine goes over once per epoch (`trainer.run(loader, max_epochs=N)`)."""
        for site in loader_calls(model):
            if id(site.node) in reported:
                continue
            runs = [r for r in engine_runs_over(model, site) if r.epochs and r.loaders[1]]
            if not runs:
                continue
            run = runs[0]
            if run.model is model:
                where, related = "line {line[engine run]}", [(run.site.node, "engine run")]
            else:
                name = run.model.display_name().replace("{", "{{").replace("}", "}}")
                where, related = f"{name}:{run.model.line_of(run.site.node)}", []
            yield from self._restart(model, site, "for every epoch of the engine run at " + where, {}, related)

    def _epoch_loops_elsewhere(self, model: FileModel, reported: set) -> Iterator[Report]:
        """Loaders of this file (a `construct_loader(cfg, split)` helper) that a loop of another
        project file goes over once per epoch: in its epoch loop, or in a function that loop
        calls (`train_epoch(train_loader, ...)`)."""
        for site in loader_calls(model):
            if id(site.node) in reported:
                continue
            for other, loop in loader_consumers(model, site):
                # The GPU is where the consumer or the loader's own file says it is. A consumer
                # of this very file counts when the epoch loop that runs it is elsewhere (an
                # `_evaluate(loader)` helper beside the loader's builder, called by `train.py`).
                if other is model and _epochs(model):
                    continue
                on_gpu = (other.uses_cuda or model.uses_cuda or (other is model and model.cuda_in_project)
                          or batches_go_to_device(model, site))
                if not on_gpu or not _per_epoch(other, loop, site):
                    continue
                name = other.display_name().replace("{", "{{").replace("}", "}}")
                if pass_every_few_epochs(other, loop, _epochs(other)):
                    yield from self._restart(model, site, f"each time the epoch loop at {name}:{other.line_of(loop.node)} "
                                             "goes over it (every few epochs)", {}, [], Severity.INFO)
                else:
                    yield from self._restart(model, site, f"for every epoch (each goes over it at {name}:{other.line_of(loop.node)})", {}, [])
                break

    def _hidden_passes(self, model: FileModel, reported: set) -> Iterator[Report]:
        """Loaders a generator or a re-created iterator goes over again and again (`model/passes.py`),
        when the epoch-loop check above did not report them."""
        for site in loader_calls(model):
            if id(site.node) in reported:
                continue
            found = [p for p in passes_over(model, site) if p.loaders[1]]
            if not found:
                continue
            where, fields, related = describe(model, found[0])
            # A peek every N steps (`next(iter(val_loader))` when sampling images) restarts
            # the workers now and then, not on every pass: info.
            periodic = all(p.periodic for p in found)
            yield from self._restart(model, site, where, fields, related, Severity.INFO if periodic else None)

    def _restart(self, model: FileModel, site, where: str, fields: dict, related,
                 severity: Optional[Severity] = None) -> Iterator[Report]:
        """The finding for a loader whose workers start again ``where`` (a message fragment),
        unless it has no workers or keeps them."""
        restarting = _restarting_workers(model, site)
        if restarting is None:
            return
        data = {"loader_options": loader_options(site.node), **fields}
        if model.guards.switched_off(site.ctx) is not None:
            severity = Severity.INFO  # built under a setting no shipped config turns on
        count = restarting.phrase(data)
        yield self.report(
            site.node,
            "DataLoader starts " + count + " again " + where + ": no `persistent_workers=True`",
            fix=self._fix(model, site, restarting),
            data=data,
            related=related,
            severity=severity,
        )

    def _epoch_loops(self, model: FileModel, only: Optional[set] = None) -> Iterator[Report]:
        epochs = {id(loop) for loop in model.epoch_loops() if not _loop_is_one_epoch(model, loop)}
        if not epochs:
            return
        iterated: dict = {}
        # Loaders every pass over which sits under a periodic test of the epoch loop
        # (`if epoch % cfg.VAL_AFTER_EVERY == 0:` around the validation loop).
        now_and_then: Dict[int, bool] = {}
        for loop in model.facts.loops:
            if type(loop.node) not in (cst.For, cst.While):
                continue
            loaders: tuple = ()
            periodic = False
            if inside_loops(loop.parent, epochs):
                if type(loop.node) is cst.For:
                    loaders = tuple(s for s in _all_loaders(loaders_iterated(model, loop)) if not _built_before_pass(s, loop))
                    periodic = pass_every_few_epochs(model, loop, epochs)
            elif loop.parent is None and loop.function is not None:
                callers = _epoch_callers(model, loop.function, epochs)
                if callers:
                    question = LoaderSites(callers)
                    loaders = (*(_all_loaders(loaders_iterated(model, loop, question)) if type(loop.node) is cst.For else ()),
                               *_afresh_loaders(model, loop, question))
            for site in loaders:
                iterated[id(site.node)] = site
                now_and_then[id(site.node)] = now_and_then.get(id(site.node), True) and periodic
        for comp in self._generator_passes(model, epochs):
            iterated[id(comp.node)] = comp
        for site in loader_calls(model):
            rebuilt = inside_loops(site.ctx.loop, epochs) or (
                site.ctx.loop is None and _epoch_callers(model, site.ctx.function, epochs) is not None
            )
            if rebuilt and _subset_of_the_pass(model, site):
                continue  # a new subset each time (`Subset(dataset, idx)` of this epoch's picks)
            if rebuilt and model.guards.periodic(site.ctx):
                # Built under a test that holds once (`if epoch >= freeze_epoch and not
                # unfrozen:`, a flag the block sets) or now and then: not every epoch. If the
                # epoch loop goes over it, its workers still start over each epoch.
                rebuilt = False
            if (id(site.node) not in iterated and not rebuilt) or (only is not None and id(site.node) not in only):
                continue
            restarting = _restarting_workers(model, site)
            if restarting is None:
                continue
            data = {"loader_options": loader_options(site.node)}
            if rebuilt:
                if restarting.counts is not None:
                    data["workers"] = restarting.counts[0]
                if restarting.default_of is not None:
                    data["default_of"] = restarting.default_of
                yield self.report(
                    site.node,
                    "DataLoader with worker processes is built anew every epoch: its workers start "
                    "over each time",
                    fix=None,
                    data=data,
                )
                continue
            if now_and_then.get(id(site.node)):
                message = ("DataLoader starts " + restarting.phrase(data) + " again each time the epoch loop goes "
                           "over it (every few epochs): no `persistent_workers=True`")
                yield self.report(site.node, message, fix=self._fix(model, site, restarting), data=data,
                                  severity=Severity.INFO)
                continue
            message = "DataLoader starts " + restarting.phrase(data) + " again for every epoch: no `persistent_workers=True`"
            # Built under a setting no shipped run turns on (`if args.use_test_as_train:`): info.
            off = model.guards.switched_off(site.ctx) is not None
            yield self.report(site.node, message, fix=self._fix(model, site, restarting), data=data,
                              severity=Severity.INFO if off else None)

    def _fix(self, model: FileModel, site: CallSite, restarting: _Restart) -> Optional[FixSpec]:
        if not site.node.args:
            return None
        value = "True"
        if restarting.default_of is not None or restarting.setting is not None:
            # The run may ask for no workers, and persistent workers without any raise: keep
            # them persistent only when there are some.
            workers_arg = restarting.workers_arg
            if workers_arg is None or not type(workers_arg.value) in (cst.Name, cst.Attribute, cst.Subscript):
                return None
            value = f"{model.code(workers_arg.value)} > 0"
        added = f"persistent_workers={value}"
        return FixSpec(
            f"add `{added}`",
            (NodeEdit(site.node.args[-1].value, f", {added}", "after"),),
            Applicability.UNSAFE,
        )

    def _generator_passes(self, model: FileModel, epochs) -> Iterator[CallSite]:
        """Comprehensions over a loader in a function the epoch loop calls (`sum(... for x in loader)`):
        the walk records no loop for them, so the function's own body is searched."""
        for info in model.facts.functions.values():
            callers = _epoch_callers(model, info, epochs)
            if not callers:
                continue  # only the bodies of functions run once per epoch are searched
            body = info.body_ctx
            question = LoaderSites(callers)
            for node in _comprehension_iters(info.node.body):
                yield from _all_loaders(loaders_held(model, node, body, model.order_of(node), question))


def _called_in_loops(model: FileModel, function) -> bool:
    """Some call of the function sits in a loop (the epoch loop calling `train()`)."""
    return function is not None and any(site.ctx.loop is not None for _, site in model.callers(function))
