"""GPU502 `ddp-loader-without-distributed-sampler`: DDP script whose training DataLoader has no DistributedSampler."""

from __future__ import annotations

import dataclasses
from typing import Dict, Iterator, List, Optional
import libcst as cst
from advisor.model.framework_wrappers import PRIVACY_WRAPPERS, wrapped_arguments
from advisor.findings import Severity
from advisor.model import CallSite, FileModel, LoopInfo
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import dotted_name, is_none, last_segment
from advisor.model.world_size_tests import single_process_only
from advisor.rules.base import Report, Rule, snippet
from advisor.model.samplers import DIST, PLAIN, SHARD_WORD, sampler_kind
from advisor.model.loaders import drawn_per_instance, loader_consumers, loader_factory, loaders_held, loaders_iterated
from advisor.model.names import DATALOADER
from advisor.rules.distributed.ddp_script import as_single_process, framework_runs_epochs, is_ddp_script
from advisor.model.containers import kwargs_value
from advisor.model.mentions import mentions
from advisor.model.vocabulary import EVAL_LOADER_NAME


# Words that say a dataset is already split between ranks by hand.
_SHARD_WORD = SHARD_WORD


class DdpWithoutDistributedSampler(Rule):
    code = "GPU502"
    name = "ddp-loader-without-distributed-sampler"
    summary = "DDP script whose training DataLoader has no DistributedSampler"
    what = """
        A `DataLoader` that feeds the training loop (a loop that runs `backward()` or an
        optimizer step iterates it, directly, through `next(...)` or inside a helper, in this
        file or in another module of the project; a prefetcher class built once per loader,
        `prefetcher = Prefetcher(train_loader)` then `prefetcher.next()`, draws from the loader
        it was built with; failing that, the only loader built with
        `shuffle=True` that is not named for evaluation) in a file that builds a
        `DistributedDataParallel` model or calls `init_process_group`, when the loader gets no
        `sampler=`, or a sampler that does not split the data between ranks
        (`RandomSampler`, `WeightedRandomSampler`, ...). A custom sampler of unknown kind is
        reported as information. Iterable datasets (they shard themselves), datasets already
        split by rank by hand (a rank or world size among what builds the dataset, up to three
        bindings back, through the caller that hands it in), and loaders prepared by Lightning, Accelerate or the Hugging
        Face Trainer (they add the sampler) are left alone, and so is a loader built in the
        `else` of the test whose true arm calls `init_process_group` (`if parallel == True:`)
        or of a switch named for distributed runs (`if args.distributed:`, `if dist:`, `if
        multi_gpu:`): that arm runs as one process.
        A loader built only under a switch no shipped run turns on (`if args.use_test_as_train:`
        after a `store_true` option no documented command passes) is info.
        All of it is information when every DDP wrap and process-group start of the file sits
        under a switch no documented run turns on (the `else` of `if args.local_rank == -1:`
        in a script every shipped command starts with plain `python`).
    """
    why = """
        Every process of a DDP job runs the same script. Without a `DistributedSampler` each of
        them iterates the whole dataset, so an epoch costs world-size times the compute of a
        real one and the ranks average gradients of the same samples: adding GPUs makes
        nothing faster.
    """
    example = """
        dist.init_process_group("nccl")
        model = DDP(model.to(rank), device_ids=[rank])
        loader = DataLoader(dataset, batch_size=64, shuffle=True)
        for x, y in loader:
            ...
    """
    instead = """
        dist.init_process_group("nccl")
        model = DDP(model.to(rank), device_ids=[rank])
        sampler = DistributedSampler(dataset)  # shuffles, one share per rank
        loader = DataLoader(dataset, batch_size=64, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for x, y in loader:
                ...
    """
    hint = "pass `sampler=DistributedSampler(dataset)` (and drop `shuffle=True`); call `set_epoch` every epoch"
    fix_safety = """
        No automatic fix. Adding a sampler means creating a `DistributedSampler`, removing
        `shuffle=True`, calling `set_epoch` every epoch, and often scaling the batch size or
        learning rate: a change to the training set-up that the author must decide.
    """
    references = (
        (
            "torch.utils.data.distributed.DistributedSampler",
            "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler",
        ),
        (
            "Getting started with distributed data parallel",
            "https://docs.pytorch.org/tutorials/intermediate/ddp_tutorial.html",
        ),
        ("Distributed data parallel notes", "https://docs.pytorch.org/docs/stable/notes/ddp.html"),
    )
    requires = (("DataLoader",), ("DistributedDataParallel", "init_process_group"))

    def check(self, model: FileModel) -> Iterator[Report]:
        # A DDP mode no documented run starts: the same reports, as information.
        yield from as_single_process(model, self._reports(model))

    def _reports(self, model: FileModel) -> Iterator[Report]:
        if not is_ddp_script(model) or framework_runs_epochs(model):
            return
        loaders = model.calls_to(DATALOADER)
        if not loaders:
            return
        training: Dict[int, CallSite] = {}
        other_loops: Dict[int, List[LoopInfo]] = {}
        for loop in model.facts.loops:
            trains = model.is_training_loop(loop)
            for site in loaders_iterated(model, loop)[0]:
                if trains:
                    training[id(site.node)] = site
                else:
                    other_loops.setdefault(id(site.node), []).append(loop)
        for site in [*model.facts.calls_by_callee.get("next", ()), *model.method_calls("next", "__next__")]:
            iterator = model.values.drawn_from(site.node, site.ctx, site.order)
            if type(iterator) is cst.Call and type(iterator.func) is cst.Name and iterator.func.value == "iter":
                continue  # `next(iter(val_loader))`: one batch peeked at, not the training draw
            if drawn_per_instance(model, site, iterator):
                continue  # a prefetcher's own draw: its callers' `prefetcher.next()` say which loader
            if iterator is not None and model.in_training_code(site.ctx):
                for found in loaders_held(model, iterator, site.ctx, site.order)[0]:
                    training[id(found.node)] = found
        if not training:
            # The loops of the project files around this one: `train_one_epoch(model,
            # loader_train, ...)` in an engine module trains on the loader passed to it.
            # This file's loops were read above; not a generator's loop (`log_every(loader)`
            # yields what every caller iterates: the evaluation's loader as much as the training's).
            for site in loaders:
                if any(other is not model and other.is_training_loop(loop)
                       and not (loop.function is not None and loop.function.generator)
                       for other, loop in loader_consumers(model, site)):
                    training[id(site.node)] = site
        if not training:
            # The one shuffled loader is the training one, unless it is named for evaluation
            # (`val_loader = DataLoader(val_set, shuffle=True)` draws random samples to show).
            shuffled = [s for s in loaders if self._shuffles(s) and not EVAL_LOADER_NAME.search(last_segment(s.assigned_to or ""))]
            if len(shuffled) == 1:
                loops = other_loops.get(id(shuffled[0].node), [])
                if not loops or not all(loop.ctx.no_grad or (loop.function and loop.function.no_grad) for loop in loops):
                    training[id(shuffled[0].node)] = shuffled[0]
        # A loader another module builds (`train_loader, _ = data.fetch_dataloaders(...)`) is
        # reported where it is built, when that file is checked: a finding names this file's code.
        own = {id(s.node) for s in loaders}
        for site in sorted((s for s in training.values() if id(s.node) in own), key=lambda s: s.order):
            report = self._check_loader(model, site)
            if report is not None:
                if report.severity is not Severity.INFO and model.guards.switched_off(site.ctx) is not None:
                    # Built under a setting no shipped run turns on (`if args.use_test_as_train:`).
                    report = dataclasses.replace(report, severity=Severity.INFO)
                yield report

    def _shuffles(self, site: CallSite) -> bool:
        arg = call_argument(site.node, "shuffle", 2)
        return arg is not None and literal_bool(arg.value) is True

    @staticmethod
    def _made_private(model: FileModel, site: CallSite) -> bool:
        """The loader goes through Opacus's `make_private(...)`, whose `DPDataLoader` draws its
        own sampler (a distributed one for a distributed model)."""
        for call in model.method_calls(*PRIVACY_WRAPPERS):
            handed = wrapped_arguments(model, call.node)
            if handed is not None and any(found is site for found in loaders_held(model, handed[2], call.ctx, call.order)[0]):
                return True
        return False

    def _check_loader(self, model: FileModel, site: CallSite) -> Optional[Report]:
        factory = loader_factory(site)
        if factory is not None and factory.distributed_sampler:
            return None  # `idist.auto_dataloader(...)` gives the loader a DistributedSampler itself
        call = site.node
        if self._dataset_shards_itself(model, site) or self._made_private(model, site):
            return None
        if single_process_only(site.ctx, model):
            return None  # built in the `else` of the test that starts the process group
        batch_sampler = call_argument(call, "batch_sampler", 4)
        if batch_sampler is not None and not is_none(batch_sampler.value):
            return self._custom(model, site, batch_sampler.value, "batch sampler")
        arg = call_argument(call, "sampler", 3)
        value = arg.value if arg is not None else None
        if value is None and any(a.star == "*" for a in call.args):
            return None
        if value is None:
            state, found = kwargs_value(model, site, "sampler")
            if state == "unknown":
                return None
            value = found
            if value is None:
                state, found = kwargs_value(model, site, "batch_sampler")
                if state != "absent":
                    return None
        if value is None or is_none(value):
            return self.report(
                call,
                "this DataLoader feeds the training loop of a DDP script without a DistributedSampler: "
                "every rank iterates the whole dataset",
            )
        verdict = sampler_kind(model, value, site.ctx, site.order)
        if verdict == DIST:
            return None
        if verdict == PLAIN:
            return self.report(
                call,
                "`{sampler}` does not split the data between ranks: in this DDP script "
                "every rank iterates the whole dataset",
                data={"sampler": snippet(model, value, 30)},
            )
        return self._custom(model, site, value, "sampler")

    def _custom(self, model: FileModel, site: CallSite, value: cst.BaseExpression, what: str) -> Optional[Report]:
        if sampler_kind(model, value, site.ctx, site.order) == DIST:
            return None
        return self.report(
            site.node,
            "the {argument} `{sampler}` is not a DistributedSampler: make sure it gives "
            "each rank its own share of the data",
            severity=Severity.INFO,
            data={"argument": what, "sampler": snippet(model, value, 30)},
        )

    def _dataset_shards_itself(self, model: FileModel, site: CallSite) -> bool:
        arg = call_argument(site.node, "dataset", 0)
        if arg is None:
            return False
        if mentions(model, arg.value, site.ctx, _SHARD_WORD, depth=-1):
            return True
        values = [arg.value]
        name = dotted_name(arg.value)
        if name is not None:
            values.extend(a.value for a in model.assignments(name, site.ctx) if a.value is not None)
        for value in values:
            if not type(value) is cst.Call:
                continue
            func = dotted_name(value.func) or ""
            qual = model.imports.qualify(value.func) or ""
            if "IterableDataset" in qual or qual.startswith(("webdataset", "torchdata")):
                return True
            if last_segment(qual) == "load_dataset" and any(
                a.keyword is not None and a.keyword.value == "streaming" for a in value.args
            ):
                return True
            info = model.facts.classes.get(func)
            if info is None and qual:
                symbol = model.symbol(qual)  # `from data.datasets import ConstantLengthDataset`
                info = symbol.info if symbol is not None and symbol.kind == "class" else None
            if info is not None and any("IterableDataset" in b for b in info.bases):
                return True
        return False
