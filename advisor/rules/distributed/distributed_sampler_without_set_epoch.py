"""GPU501 `distributed-sampler-without-set-epoch`: DistributedSampler reused across epochs without `set_epoch(epoch)`."""

from __future__ import annotations
from typing import Dict, Iterator, List, Optional, Set, Tuple
import libcst as cst

from advisor.model.containers import call_held_under
from advisor.findings import Fixable, Severity
from advisor.model import CallSite, FileModel, LoopInfo
from advisor.model.facts import MODULE_SCOPE
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.guards import at_most_one_round
from advisor.model.call_loops import loops_running
from advisor.model.kinds import BuiltBy
from advisor.model.loaders import loader_consumers
from advisor.model.names import DATALOADER, DISTRIBUTED_SAMPLER
from advisor.model.passes import describe, passes_over
from advisor.model.samplers import evaluation_only
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.rules.distributed.ddp_script import framework_runs_epochs


class SamplerWithoutSetEpoch(Rule):
    code = "GPU501"
    name = "distributed-sampler-without-set-epoch"
    summary = "DistributedSampler reused across epochs without `set_epoch(epoch)`"
    what = """
        A shuffling `DistributedSampler` in a script with an epoch loop (a loop around the
        training loop) in which no `.set_epoch(...)` call runs, directly or through a function
        or a method of an object it calls (in its file or another module of the project: a
        worker whose batch helper calls `self.loader.sampler.set_epoch(n)` when a pass ends
        sets it); or whose loader an endless
        generator or a re-created `iter(loader)` goes over again and again with no `set_epoch`
        between the passes (a generator drawn with `next(...)` only inside a loop that calls
        `set_epoch`, an epoch loop around the steps, starts each new pass after one, also when
        it is kept in a dict of loaders, `next(self.loaders["train"])`; so does one
        gone over by `for` loops, in any file, whose bodies call `set_epoch` when a pass starts:
        `for batch in cyclize(loader): if step % len(loader) == 0: loader.sampler.set_epoch(...)`). The epoch loop may sit in another module than the sampler, around
        the loop that goes over the loader or around a call of the function holding that loop
        (`train(epoch, train_loader)`); a loader built with `batch_sampler=BatchSampler(sampler,
        ...)` counts as built on the sampler. Reported at the sampler, naming the epoch loop (or
        where the passes start again). A sampler whose loaders only evaluation loops take from (validation,
        test: the order changes no result) is reported as info, and so is one built only under a
        switch no documented run turns on (`DistributedSampler(ds) if args.local_rank != -1 else
        ...` in a script whose READMEs and launch scripts start it with plain `python`, never
        through `torch.distributed.launch`, `torchrun` or another launcher). An epoch loop that
        runs at most once (`range(args.num_train_epochs)` with the option at 1 in every shipped
        run) draws the order once: nothing to reshuffle. An epoch loop that calls a
        hook (`callback.on_epoch_begin(epoch)`) whose project implementation calls `set_epoch`
        sets it. Samplers with
        `shuffle=False` and code run by Lightning, Accelerate or the Hugging Face Trainer
        (which set the epoch themselves) are left alone.
    """
    why = """
        The sampler seeds its shuffle with `seed + epoch`, and the epoch only changes when you
        call `set_epoch`. Without it every epoch visits the data in exactly the same order on
        every rank: the run looks healthy, but loses the benefit of reshuffling and usually
        generalises worse.
    """
    example = """
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=64, sampler=sampler)
        for epoch in range(epochs):
            for x, y in loader:
                train_step(x, y)
    """
    instead = """
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=64, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for x, y in loader:
                train_step(x, y)
    """
    hint = "call `sampler.set_epoch(epoch)` at the start of every epoch"
    fixable = Fixable.SOMETIMES_SAFE
    fix_safety = """
        The fix inserts `<sampler>.set_epoch(<epoch>)` as the first statement of the epoch loop,
        naming the sampler (or `loader.sampler`) visible there and the loop's variable. The data
        order then changes every epoch, which is the point of the fix. It assumes:

        - the loop variable counts epochs with integers (a loop over configurations would pass a
          non-integer);
        - with several distributed samplers in scope, the first one found is the one to reshuffle;
          check the inserted line names the training sampler;
        - comparing with earlier runs is not needed: runs after the fix see a different order.

        Not offered when the epoch loop is a `while` loop, unpacks its target or names it `_`, or
        when no name for the sampler is visible in the loop.
    """
    references = (
        (
            "torch.utils.data.distributed.DistributedSampler (call `set_epoch` every epoch)",
            "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler",
        ),
        (
            "torch/utils/data/distributed.py: the shuffle is seeded with `seed + epoch`",
            "https://github.com/pytorch/pytorch/blob/main/torch/utils/data/distributed.py",
        ),
    )
    requires = (("DistributedSampler",),)

    def check(self, model: FileModel) -> Iterator[Report]:
        if framework_runs_epochs(model):
            return
        samplers = [s for s in model.calls_to(DISTRIBUTED_SAMPLER) if self._shuffles(s)]
        if not samplers:
            return
        reported = set()
        for report in self._by_epoch_loops(model, samplers):
            reported.add(id(report.node))
            yield report
        for site in samplers:
            if id(site.node) not in reported:
                yield from self._by_hidden_passes(model, site)

    def _by_hidden_passes(self, model: FileModel, site: CallSite) -> Iterator[Report]:
        """A loader built on the sampler that a generator or a re-created iterator goes over
        again and again (`model/passes.py`), with no `set_epoch` in the loop that repeats the
        passes, nor in the loops around it."""
        built_on = BuiltBy(DISTRIBUTED_SAMPLER)
        for loader in model.calls_to(DATALOADER):
            arg = _sampler_argument(loader)
            if arg is None or id(site.node) not in model.values.ask(built_on, arg.value, loader.ctx, loader.order):
                continue
            passes = passes_over(model, loader)
            if not passes or any(self._pass_sets_epoch(p) or self._draws_set_epoch(model, p) or self._consumer_sets_epoch(p)
                                 for p in passes):
                continue
            where, fields, related = describe(model, passes[0])
            yield self.report(
                site.node,
                "DistributedSampler is read again " + where + " but `set_epoch` is never called "
                "between passes: every pass sees the same order",
                data={"sampler": self._own_name(site) or "sampler", **fields},
                related=related,
                hint="call `{sampler}.set_epoch(n)` before each new pass, with a count of the passes",
                severity=_severity(model, site),
            )
            return

    def _pass_sets_epoch(self, item) -> bool:
        """`set_epoch` runs in the loop that repeats the pass or in one around it (through the
        functions of its file it calls, too), or in the generator or function that makes it."""
        loop = item.loop
        while loop is not None:
            if self._sets_epoch(item.loop_model, loop, {}):
                return True
            loop = loop.parent
        function = item.function
        return function is not None and self._function_sets_epoch(item.model, function.key, {})

    def _consumer_sets_epoch(self, item) -> bool:
        """Every loop that goes over the generator (`for batch in cyclize(loader):`, in any file of
        the project) calls `set_epoch` in its body (`loader.sampler.set_epoch(epoch)` when a
        step count reaches a multiple of the loader's length): the passes it starts read it."""
        if item.how != "generator" or item.function is None:
            return False
        consumers = []
        for owner, site in item.model.callers(item.function):
            for candidate in owner.facts.loops:
                iterated = getattr(candidate.node, "iter", None)
                if iterated is site.node or (type(iterated) is cst.Call and any(a.value is site.node for a in iterated.args)):
                    loop = candidate
                    break
            else:
                return False  # drawn some other way: `next(gen)` is `_draws_set_epoch`'s
            consumers.append((owner, loop))
        return bool(consumers) and all(self._sets_epoch(owner, loop, {}) for owner, loop in consumers)

    def _draws_set_epoch(self, model: FileModel, item) -> bool:
        """The generator's batches are drawn (`next(datalooper)`) only inside loops of this file
        one of which calls `set_epoch` (an epoch loop around the steps): each new pass the
        generator starts there reads the epoch the loop set last."""
        if item.how != "generator" or item.function is None:
            return False
        draws = []
        for site in [*model.facts.calls_by_callee.get("next", ()), *model.method_calls("__next__")]:
            iterator = model.values.drawn_from(site.node, site.ctx, site.order)
            made = model.values.callee(iterator, site.ctx, site.order) if type(iterator) is cst.Call else None
            if made is None and type(iterator) is cst.Name:
                bound = model.reaching(iterator.value, site.ctx, site.order)
                value = bound[0].value if len(bound) == 1 else None
                made = model.values.callee(value, site.ctx, site.order) if type(value) is cst.Call else None
            if made is None and type(iterator) is cst.Subscript:
                held = call_held_under(model, iterator, site.ctx, site.order)
                made = held.flow.callee(held.expr, held.ctx, held.order) if held is not None else None
            if made is not None and made[1] is item.function:
                draws.append(site)
        if not draws:
            return False
        memo: dict = {}
        for site in draws:
            loop = site.ctx.loop
            while loop is not None and not self._sets_epoch(model, loop, memo):
                loop = loop.parent
            if loop is None:
                return False
        return True

    def _by_epoch_loops(self, model: FileModel, samplers: List[CallSite]) -> Iterator[Report]:
        every = model.epoch_loops()
        # `for epoch in range(args.num_train_epochs)` with one epoch in every shipped run: the
        # order is drawn once, and reshuffling it changes nothing.
        epoch_loops = [loop for loop in every if not at_most_one_round(model, loop)]
        if every and not epoch_loops:
            return
        if not epoch_loops:
            yield from self._consumed_elsewhere(model, samplers)
            return
        memo: Dict[tuple, bool] = {}
        if any(self._sets_epoch(model, loop, memo) for loop in epoch_loops):
            return
        loop = self._innermost(model, epoch_loops)
        for site in samplers:
            yield self.report(
                site.node,
                "DistributedSampler is reused by the epoch loop at line {line[epoch loop]} but `set_epoch` "
                "is never called: every epoch sees the same order",
                fix=self._fix(model, loop, site),
                data=self._names(model, loop, site),
                related=[(loop.node, "epoch loop")],
                hint="call `{sampler}.set_epoch({epoch})` at the start of every epoch",
                severity=_severity(model, site),
            )

    def _consumed_elsewhere(self, model: FileModel, samplers: List[CallSite]) -> Iterator[Report]:
        """Samplers of a file with no epoch loop (a data module): the epoch loops of other
        project files that iterate a loader built on them."""
        built_on = BuiltBy(DISTRIBUTED_SAMPLER)
        for site in samplers:
            for loader in model.calls_to(DATALOADER):
                arg = _sampler_argument(loader)
                if arg is None or id(site.node) not in model.values.ask(built_on, arg.value, loader.ctx, loader.order):
                    continue
                consumers = [(other, loop) for other, loop in loader_consumers(model, loader) if other is not model]
                epochs = [
                    (owner, parent)
                    for other, loop in consumers
                    for owner, parent in _around(other, loop)
                    if owner.is_training_loop(parent) and not owner.is_hot_loop(parent)
                ]
                if not epochs or any(self._sets_epoch(other, loop, {}) for other, loop in epochs):
                    continue
                # Only evaluation passes read it (`validate(val_loader)` in the epoch loop): its
                # order changes no result.
                trains = any(
                    other.is_training_loop(loop) or other.in_training_code(loop.ctx) for other, loop in consumers
                )
                other, loop = epochs[0]
                target = loop.node.target if type(loop.node) is cst.For else None
                yield self.report(
                    site.node,
                    "DistributedSampler is reused by the epoch loop at {where} but `set_epoch` is never "
                    "called: every epoch sees the same order",
                    data={
                        "where": f"{other.display_name()}:{other.line_of(loop.node)}",
                        "sampler": self._own_name(site) or "sampler",
                        "epoch": target.value if type(target) is cst.Name and target.value != "_" else "epoch",
                    },
                    hint="call `{sampler}.set_epoch({epoch})` at the start of every epoch",
                    severity=_severity(model, site) if trains else Severity.INFO,
                )
                break

    def _names(self, model: FileModel, loop: LoopInfo, site: CallSite) -> Dict[str, str]:
        """The names the finding's hint uses, the fix's where it has one: the variable to call
        `set_epoch` on (else the sampler's own), and the epoch loop's variable."""
        sampler = self._receiver(model, loop, site) or self._own_name(site) or "sampler"
        target = loop.node.target if type(loop.node) is cst.For else None
        epoch = target.value if type(target) is cst.Name and target.value != "_" else "epoch"
        return {"sampler": sampler, "epoch": epoch}

    @staticmethod
    def _own_name(site: CallSite) -> Optional[str]:
        """The name the sampler is assigned to (not `loader = DataLoader(ds, sampler=DistributedSampler(ds))`)."""
        return site.assigned_to if site.outer is None else None

    def _receiver(self, model: FileModel, loop: LoopInfo, site: CallSite) -> Optional[str]:
        """What the fix calls `set_epoch` on: this sampler's own name where the epoch loop sees it,
        else a sampler, or a loader built on one, visible in the loop."""
        own = self._own_name(site)
        if own is not None and "dist_sampler" in model.name_kinds(own, loop.ctx, 1 << 30):
            return own
        return self._receiver_in_scope(model, loop)

    @staticmethod
    def _shuffles(site: CallSite) -> bool:
        arg = call_argument(site.node, "shuffle", 3)
        return arg is None or literal_bool(arg.value) is not False

    def _sets_epoch(self, model: FileModel, loop: LoopInfo, memo: Dict[tuple, bool]) -> bool:
        """`set_epoch` runs in the loop's body, or in a function it calls: of its file, or of
        another module of the project (`train(..., sampler=sampler)` in `utils/train_utils.py`),
        also a method of an instance (`worker.train_step()` whose batch helper calls
        `self.loader.sampler.set_epoch(n)` when a pass ends)."""
        return (
            loop.set_epoch
            or any(self._function_sets_epoch(model, c, memo) for c in loop.callees)
            or any(self._function_sets_epoch(m, f.key, memo) for m, f in _targets(model, loop.sites))
            or _hook_sets_epoch(model, loop)
        )

    def _function_sets_epoch(self, model: FileModel, key: str, memo: Dict[tuple, bool]) -> bool:
        known = (id(model), key)
        if known in memo:
            return memo[known]
        memo[known] = False
        info = model.function(key)
        result = info is not None and (
            info.set_epoch
            or any(self._function_sets_epoch(model, c, memo) for c in info.callees)
            or any(self._function_sets_epoch(m, f.key, memo) for m, f in _targets(model, info.sites))
        )
        memo[known] = result
        return result

    def _innermost(self, model: FileModel, loops: List[LoopInfo]) -> LoopInfo:
        """The epoch loop closest to the batches: the one no other epoch loop sits inside."""
        inside: Set[int] = set()
        for loop in loops:
            parent = loop.parent
            while parent is not None:
                inside.add(id(parent))
                parent = parent.parent
        for loop in loops:
            if id(loop) not in inside:
                return loop
        return loops[0]

    def _fix(self, model: FileModel, loop: LoopInfo, site: CallSite) -> Optional[FixSpec]:
        node = loop.node
        if not type(node) is cst.For or not type(node.target) is cst.Name or node.target.value == "_":
            return None
        receiver = self._receiver(model, loop, site)
        if receiver is None:
            return None
        call = f"{receiver}.set_epoch({node.target.value})"
        body = node.body
        first = body.body[0]
        if type(body) is cst.IndentedBlock:
            edit = NodeEdit(first, call, "line_before")
        else:
            edit = NodeEdit(first, f"{call}; ", "before")
        return FixSpec(f"call `{call}` at the start of each epoch", (edit,))

    def _receiver_in_scope(self, model: FileModel, loop: LoopInfo) -> Optional[str]:
        """A name visible in the epoch loop that holds the sampler, or a loader built on it."""
        ctx = loop.ctx
        scopes = [ctx.scope, MODULE_SCOPE]
        if ctx.class_name:
            scopes.insert(0, f"class:{ctx.class_name}")
        loaders: List[str] = []
        for scope in scopes:
            for (where, name), assignments in model.facts.assignments.items():
                if where != scope or assignments[0].value is None:
                    continue
                kinds = model.name_kinds(name, ctx, 1 << 30)
                if "dist_sampler" in kinds:
                    return name
                if "dist_loader" in kinds:
                    loaders.append(name)
        return f"{loaders[0]}.sampler" if loaders else None


def _sampler_argument(loader: CallSite):
    """What a loader draws its indices from: `sampler=`, else `batch_sampler=` (a `BatchSampler`
    built on a sampler: `BuiltBy` looks through it)."""
    return call_argument(loader.node, "sampler", 3) or call_argument(loader.node, "batch_sampler", 4)


def _severity(model: FileModel, site: CallSite) -> Optional[Severity]:
    """A sampler only evaluation loops take from: its order changes no result (info). So is one
    built only under a switch no run of the project turns on (`DistributedSampler(ds) if
    args.local_rank != -1 else ...` where no documented command starts the script through a
    distributed launcher): no shipped run builds it."""
    if evaluation_only(model, site):
        return Severity.INFO
    if model.guards.switched_off(site.ctx) or model.guards.switched_off_arm(site.node, site.ctx, site.order):
        return Severity.INFO
    return None


def _around(model: FileModel, loop: LoopInfo) -> List[Tuple[FileModel, LoopInfo]]:
    """The loops that repeat ``loop``: those around it, else (a loop at the top of its function,
    `train(epoch, loader)`) those around the calls of its function, in any project file."""
    if loop.parent is not None or loop.function is None:
        return [(model, parent) for parent in _enclosing(loop)]
    return loops_running(model, loop.function)


def _enclosing(loop: LoopInfo) -> Iterator[LoopInfo]:
    parent = loop.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _hook_sets_epoch(model: FileModel, loop: LoopInfo) -> bool:
    """The loop calls a hook method (`callback.on_epoch_begin(epoch)` over a trainer's callbacks,
    which may be of any class handed in), and a method of that name somewhere in the project
    calls `set_epoch` (`self.trainer.train_data.sampler.set_epoch(epoch)` in a callback class)."""
    methods = {site.method for site in loop.sites if site.method is not None and site.method.startswith("on_")}
    return bool(methods) and bool(methods & model.shared("hooks-setting-epoch", _hooks_setting_epoch))


def _hooks_setting_epoch(model: FileModel) -> frozenset:
    """The names of the project's `on_*` methods that call `set_epoch` (once per file)."""
    project = model.project
    if project is None:
        return frozenset()
    names = set()
    for path in sorted(project.files_containing(".set_epoch(")):
        other = project.model(path)
        if other is None:
            continue
        names.update(info.node.name.value for info in other.facts.functions.values()
                     if info.set_epoch and info.class_name is not None and info.node.name.value.startswith("on_"))
    return frozenset(names)



def _targets(model: FileModel, sites):
    """The project functions and methods the calls run, with their files."""
    for site in sites:
        yield from model.calls.targets(site)
