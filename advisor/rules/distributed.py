"""Distributed training (GPU5xx)."""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from advisor.findings import Severity
from advisor.model import CallSite, Context, FileModel, FunctionInfo, LoopInfo
from advisor.model.builder import gate_kinds
from advisor.model.facts import MODULE_SCOPE
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import DATALOADER, DISTRIBUTED_SAMPLER, dotted_name, is_none, last_segment
from advisor.model.subtree import contains, iter_names
from advisor.model.walk import children
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule, snippet

# Lightning calls `sampler.set_epoch` for the loaders it manages; Accelerate and Fabric do it for
# prepared loaders, and the HF Trainer for its own. Importing a helper from them is not enough.
_LIGHTNING = ("lightning", "pytorch_lightning")


def _framework_runs_epochs(model: FileModel) -> bool:
    if model.uses_framework(*_LIGHTNING):
        return True
    if model.method_calls("prepare", "setup_dataloaders", "prepare_data_loader"):
        return True
    return any(
        q.startswith("accelerate.") or (q.startswith("transformers.") and q.endswith("Trainer"))
        for q in model.facts.calls_by_qualname
    )


class SamplerWithoutSetEpoch(Rule):
    code = "GPU501"
    name = "distributed-sampler-without-set-epoch"
    summary = "DistributedSampler reused across epochs without `set_epoch(epoch)`"
    what = """
        A shuffling `DistributedSampler` in a script with an epoch loop (a loop around the
        training loop) in which no `.set_epoch(...)` call runs, directly or through a function
        it calls. Reported at the sampler, naming the epoch loop. Samplers with
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
    fixable = "sometimes"
    requires = (("DistributedSampler",),)

    VALID = [
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(ds)
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(10):
                sampler.set_epoch(epoch)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            note="set_epoch present",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            loader = DataLoader(ds, sampler=DistributedSampler(ds))
            for epoch in range(10):
                loader.sampler.set_epoch(epoch)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            note="through loader.sampler",
        ),
        Case(
            """
            from torch.utils.data.distributed import DistributedSampler
            def train_one_epoch(loader, epoch):
                loader.sampler.set_epoch(epoch)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            loader = DataLoader(ds, sampler=DistributedSampler(ds))
            for epoch in range(10):
                train_one_epoch(loader, epoch)
            """,
            note="set_epoch in a helper",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            val_loader = DataLoader(val_ds, sampler=DistributedSampler(val_ds, shuffle=False))
            for epoch in range(10):
                for x, y in train_loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            note="shuffle=False",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(ds)
            loader = DataLoader(ds, sampler=sampler)
            for x, y in loader:
                loss = model(x, y)
                loss.backward()
                optimizer.step()
            """,
            note="a single pass",
        ),
        Case(
            """
            import lightning as L
            from torch.utils.data import DataLoader, DistributedSampler
            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.ds, sampler=DistributedSampler(self.ds))
            L.Trainer(max_epochs=10).fit(model, Data())
            """,
            note="Lightning sets the epoch",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            def forever(loader):
                epoch = 0
                while True:
                    loader.sampler.set_epoch(epoch)
                    yield from loader
                    epoch += 1
            loader = DataLoader(ds, sampler=DistributedSampler(ds))
            batches = forever(loader)
            for step in range(max_steps):
                for micro in range(accum):
                    x, y = next(batches)
                    (model(x, y) / accum).backward()
                optimizer.step()
            """,
            note="step loop with micro-batches, epochs set by a generator",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(ds)  # expect: GPU501
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(ds)  # expect: GPU501
            loader = DataLoader(ds, sampler=sampler)
            for epoch in range(10):
                sampler.set_epoch(epoch)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
        ),
        Case(
            """
            import torch.utils.data as tud
            def main():
                loader = tud.DataLoader(ds, batch_size=8, sampler=tud.DistributedSampler(ds, shuffle=True))  # expect: GPU501
                for epoch in range(args.epochs):
                    # one pass over the data
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        optimizer.step()
            """,
            fixed="""
            import torch.utils.data as tud
            def main():
                loader = tud.DataLoader(ds, batch_size=8, sampler=tud.DistributedSampler(ds, shuffle=True))  # expect: GPU501
                for epoch in range(args.epochs):
                    # one pass over the data
                    loader.sampler.set_epoch(epoch)
                    for x, y in loader:
                        loss = model(x, y)
                        loss.backward()
                        optimizer.step()
            """,
            note="inline sampler, fix through loader.sampler",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler
            def build_loader(ds, batch_size):
                sampler = DistributedSampler(ds)  # expect: GPU501
                return DataLoader(ds, batch_size=batch_size, sampler=sampler)
            def train_one_epoch(loader):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            loader = build_loader(ds, 32)
            for epoch in range(5):
                train_one_epoch(loader)
            """,
            fixed="""
            from torch.utils.data import DataLoader
            from torch.utils.data.distributed import DistributedSampler
            def build_loader(ds, batch_size):
                sampler = DistributedSampler(ds)  # expect: GPU501
                return DataLoader(ds, batch_size=batch_size, sampler=sampler)
            def train_one_epoch(loader):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            loader = build_loader(ds, 32)
            for epoch in range(5):
                loader.sampler.set_epoch(epoch)
                train_one_epoch(loader)
            """,
            note="sampler made in a helper and returned inside the loader",
        ),
        Case(
            """
            from torch.utils.data import DistributedSampler
            def get_data():
                sampler = DistributedSampler(ds)  # expect: GPU501
                return DataLoader(ds, sampler=sampler), sampler
            train_loader, train_sampler = get_data()
            for _ in range(3):
                for batch in train_loader:
                    model(batch).sum().backward()
                    optimizer.step()
            """,
            note="no loop variable: reported without a fix",
        ),
        Case(
            """
            from torch.utils.data import DistributedSampler, DataLoader
            class Trainer:
                def __init__(self, ds):
                    self.sampler = DistributedSampler(ds, seed=0)  # expect: GPU501
                    self.loader = DataLoader(ds, sampler=self.sampler)
                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.train_epoch()
                def train_epoch(self):
                    for x, y in self.loader:
                        self.model(x, y).backward()
                        self.optimizer.step()
            """,
            fixed="""
            from torch.utils.data import DistributedSampler, DataLoader
            class Trainer:
                def __init__(self, ds):
                    self.sampler = DistributedSampler(ds, seed=0)  # expect: GPU501
                    self.loader = DataLoader(ds, sampler=self.sampler)
                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.sampler.set_epoch(epoch)
                        self.train_epoch()
                def train_epoch(self):
                    for x, y in self.loader:
                        self.model(x, y).backward()
                        self.optimizer.step()
            """,
            note="class-based trainer",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            from transformers import get_linear_schedule_with_warmup
            sampler = DistributedSampler(train_ds)  # expect: GPU501
            loader = DataLoader(train_ds, batch_size=32, sampler=sampler)
            for epoch in range(3):
                for batch in loader:
                    model(**batch).loss.backward()
                    optimizer.step()
            """,
            fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            from transformers import get_linear_schedule_with_warmup
            sampler = DistributedSampler(train_ds)  # expect: GPU501
            loader = DataLoader(train_ds, batch_size=32, sampler=sampler)
            for epoch in range(3):
                sampler.set_epoch(epoch)
                for batch in loader:
                    model(**batch).loss.backward()
                    optimizer.step()
            """,
            note="importing a transformers helper is not using its Trainer",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if _framework_runs_epochs(model):
            return
        samplers = [s for s in model.calls_to(DISTRIBUTED_SAMPLER) if self._shuffles(s)]
        if not samplers:
            return
        epoch_loops = model.epoch_loops()
        if not epoch_loops:
            return
        memo: Dict[str, bool] = {}
        if any(self._sets_epoch(model, loop, memo) for loop in epoch_loops):
            return
        loop = self._innermost(model, epoch_loops)
        for site in samplers:
            report = self.report(
                site.node,
                "DistributedSampler is reused by the epoch loop at line {line} but `set_epoch` "
                "is never called: every epoch sees the same order",
                fix=self._fix(model, loop),
            )
            report.related = loop.node
            yield report

    def _shuffles(self, site: CallSite) -> bool:
        arg = call_argument(site.node, "shuffle", 3)
        return arg is None or literal_bool(arg.value) is not False

    def _sets_epoch(self, model: FileModel, loop: LoopInfo, memo: Dict[str, bool]) -> bool:
        return loop.set_epoch or any(self._function_sets_epoch(model, c, memo) for c in loop.callees)

    def _function_sets_epoch(self, model: FileModel, key: str, memo: Dict[str, bool]) -> bool:
        if key in memo:
            return memo[key]
        memo[key] = False
        info = model.function(key)
        result = info is not None and (
            info.set_epoch or any(self._function_sets_epoch(model, c, memo) for c in info.callees)
        )
        memo[key] = result
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

    def _fix(self, model: FileModel, loop: LoopInfo) -> Optional[FixSpec]:
        node = loop.node
        if not isinstance(node, cst.For) or not isinstance(node.target, cst.Name) or node.target.value == "_":
            return None
        receiver = self._receiver_in_scope(model, loop)
        if receiver is None:
            return None
        call = f"{receiver}.set_epoch({node.target.value})"
        body = node.body
        first = body.body[0]
        if isinstance(body, cst.IndentedBlock):
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


def _save_functions(model: FileModel) -> Set[str]:
    """Same-module functions that end up calling torch.save."""
    savers = {key for key, info in model.facts.functions.items() if info.calls_save}
    changed = True
    while changed:
        changed = False
        for key, info in model.facts.functions.items():
            if key not in savers and info.callees & savers:
                savers.add(key)
                changed = True
    return savers


class WrappedStateDictSaved(Rule):
    code = "GPU503"
    name = "wrapped-model-state-dict-saved"
    summary = "saving a DDP/DataParallel model's `state_dict()` instead of `.module`'s"
    what = """
        `state_dict()` called on a model wrapped in `DistributedDataParallel` or
        `DataParallel` when the result is saved: passed to `torch.save` directly, inside a
        checkpoint dict, or through a function of the module that saves.
    """
    why = """
        A wrapper stores the real model as `.module`, so every key of its state dict starts
        with `module.`. Loading that checkpoint into the plain model fails in strict mode, and
        with `strict=False` it loads nothing at all and says so only in the returned key lists:
        the model quietly keeps its random weights.
    """
    example = """
        model = DDP(model, device_ids=[rank])
        ...
        torch.save(model.state_dict(), "checkpoint.pt")
    """
    instead = """
        model = DDP(model, device_ids=[rank])
        ...
        if rank == 0:
            torch.save(model.module.state_dict(), "checkpoint.pt")
    """
    hint = "save `model.module.state_dict()` so that the keys match the unwrapped model"
    fixable = "safe"
    requires = (("state_dict",), ("DistributedDataParallel", "DataParallel", "DDP"))

    VALID = [
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model)
            torch.save(model.module.state_dict(), "ckpt.pt")
            """,
            note="already unwrapped",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            net = Net()
            torch.save(net.state_dict(), "init.pt")
            model = DDP(net)
            """,
            note="saved before wrapping, other name",
        ),
        Case(
            """
            import torch
            model = Net()
            torch.save({"model": model.state_dict()}, "ckpt.pt")
            """,
            note="never wrapped",
        ),
        Case(
            """
            import torch
            from accelerate import Accelerator
            accelerator = Accelerator()
            model = accelerator.prepare(model)
            torch.save(accelerator.unwrap_model(model).state_dict(), "ckpt.pt")
            """,
            note="Accelerate unwrap",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = Net()
            torch.save(model.state_dict(), "init.pt")
            model = DDP(model)
            """,
            note="same name, saved before wrapping",
        ),
        Case(
            """
            import torch.nn as nn
            model = nn.DataParallel(model)
            sd = model.state_dict()
            print(len(sd))
            """,
            note="state dict not saved",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            if ddp:
                model = DDP(model, device_ids=[local_rank])
            raw_model = model.module if ddp else model
            torch.save({"model": raw_model.state_dict(), "iter": it}, "ckpt.pt")
            """,
            note="unwrapped with a conditional expression",
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            model = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
            to_save = model.module if hasattr(model, "module") else model
            torch.save(to_save.state_dict(), "m.pt")
            """,
            note="hasattr unwrap",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[rank])
            torch.save(model.state_dict(), "ckpt.pt")  # expect: GPU503
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[rank])
            torch.save(model.module.state_dict(), "ckpt.pt")  # expect: GPU503
            """,
        ),
        Case(
            """
            import torch
            import torch.nn as nn
            model = nn.DataParallel(Net()).cuda()
            checkpoint = {
                "epoch": epoch,
                "model": model.state_dict(),  # expect: GPU503
                "optimizer": optimizer.state_dict(),
            }
            torch.save(checkpoint, path)
            """,
            fixed="""
            import torch
            import torch.nn as nn
            model = nn.DataParallel(Net()).cuda()
            checkpoint = {
                "epoch": epoch,
                "model": model.module.state_dict(),  # expect: GPU503
                "optimizer": optimizer.state_dict(),
            }
            torch.save(checkpoint, path)
            """,
            note="checkpoint dict",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel
            def save_checkpoint(state, path):
                torch.save(state, path)
            def main():
                model = DistributedDataParallel(build_model())
                save_checkpoint({"model": model.state_dict()}, "last.pt")  # expect: GPU503
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel
            def save_checkpoint(state, path):
                torch.save(state, path)
            def main():
                model = DistributedDataParallel(build_model())
                save_checkpoint({"model": model.module.state_dict()}, "last.pt")  # expect: GPU503
            """,
            note="through a saving helper",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            if args.distributed:
                model = DDP(model)
            torch.save(model.state_dict(), "ckpt.pt")  # expect: GPU503
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            if args.distributed:
                model = DDP(model)
            torch.save(getattr(model, "module", model).state_dict(), "ckpt.pt")  # expect: GPU503
            """,
            note="wrapped only sometimes",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Trainer:
                def __init__(self, model, rank):
                    self.model = DDP(model.to(rank), device_ids=[rank])
                def save(self, path):
                    state = self.model.state_dict()  # expect: GPU503
                    torch.save(state, path)
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Trainer:
                def __init__(self, model, rank):
                    self.model = DDP(model.to(rank), device_ids=[rank])
                def save(self, path):
                    state = self.model.module.state_dict()  # expect: GPU503
                    torch.save(state, path)
            """,
            note="attribute of a trainer class",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def save(model, path):
                torch.save(model.state_dict(), path)  # expect: GPU503
            ddp_model = DDP(net)
            save(ddp_model, "a.pt")
            """,
            fixed="""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def save(model, path):
                torch.save(model.module.state_dict(), path)  # expect: GPU503
            ddp_model = DDP(net)
            save(ddp_model, "a.pt")
            """,
            note="wrapped model passed to a helper",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        savers: Optional[Set[str]] = None
        for site in model.method_calls("state_dict"):
            if site.receiver is None or site.node.args:
                continue
            kinds = model.kinds(site.receiver, site.ctx, site.order)
            if "ddp" not in kinds:
                continue
            if savers is None:
                savers = _save_functions(model)
            if not self._is_saved(model, site, savers):
                continue
            receiver = model.code(site.receiver)
            if kinds["ddp"]:
                fix = FixSpec("save `.module.state_dict()`", (NodeEdit(site.receiver, ".module", "after"),))
            else:
                fix = FixSpec(
                    "unwrap the model when it is wrapped",
                    (NodeEdit(site.receiver, f'getattr({receiver}, "module", {receiver})'),),
                )
            verb = "is" if kinds["ddp"] else "may be"
            yield self.report(
                site.node,
                f"`{receiver}` {verb} wrapped in DDP/DataParallel: its state_dict keys then start with "
                "`module.` and will not load into the plain model",
                fix=fix,
            )

    def _is_save_call(self, site: CallSite, savers: Set[str]) -> bool:
        if site.qualname == "torch.save":
            return True
        func = site.node.func
        return isinstance(func, cst.Name) and func.value in savers

    def _is_saved(self, model: FileModel, site: CallSite, savers: Set[str]) -> bool:
        outer = site.outer
        while outer is not None:
            if self._is_save_call(outer, savers):
                return True
            outer = outer.outer
        target = site.assigned_to
        if target is None:
            return False
        candidates = model.calls_to("torch.save") + [
            s for key in savers for s in model.facts.calls_by_callee.get(key, ())
        ]
        for save in candidates:
            if save.ctx.scope != site.ctx.scope or save.order < site.order:
                continue
            if any(target == name for arg in save.node.args for name in _names_and_dotted(arg.value)):
                return True
        return False


def _names_and_dotted(node: cst.CSTNode) -> Iterator[str]:
    name = dotted_name(node) if isinstance(node, cst.BaseExpression) else None
    if name is not None:
        yield name
    yield from iter_names(node)


# -- shared by GPU502, GPU504-GPU507 --------------------------------------------------------------

_DDP = "torch.nn.parallel.DistributedDataParallel"
_DATA_PARALLEL = "torch.nn.parallel.DataParallel"
_INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
# Names whose value differs between ranks: `rank`, `local_rank`, `ddp_rank`, `dist.get_rank()`,
# `accelerator.process_index`.
_RANK_WORD = re.compile(r"rank|process_index|proc_id", re.IGNORECASE)
# Words that say a dataset is already split between ranks by hand.
_SHARD_WORD = re.compile(r"rank|world_size|num_replicas|num_shards|shard|split_dataset_by_node|process_index", re.I)
_ITER_WRAPPERS = frozenset({"enumerate", "tqdm", "trange", "iter", "zip", "islice", "cycle", "chain"})
_PLAIN_SAMPLERS = frozenset(
    "torch.utils.data." + name
    for name in ("RandomSampler", "SequentialSampler", "WeightedRandomSampler", "SubsetRandomSampler")
) | frozenset(
    "torch.utils.data.sampler." + name
    for name in ("RandomSampler", "SequentialSampler", "WeightedRandomSampler", "SubsetRandomSampler")
)


def is_ddp_script(model: FileModel) -> bool:
    """The file builds a DDP model or starts a process group: it runs once per rank."""
    return bool(model.calls_to(_DDP, _INIT_PROCESS_GROUP))


def unwrap_iterable(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What a `for` really iterates: `loader` in `enumerate(tqdm(loader))`, both loaders of a `zip`."""
    out: List[cst.BaseExpression] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and last_segment(dotted_name(node.func)) in _ITER_WRAPPERS:
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            if last_segment(dotted_name(node.func)) in ("zip", "chain"):
                stack.extend(positional)
            elif positional:
                stack.append(positional[0])
            continue
        out.append(node)
    return out


class LoaderResolver:
    """Which `DataLoader(...)` calls of the file an expression may hold. Follows assignments,
    tuple unpacking, helper returns, helper parameters (at their call sites), wrapper classes of
    the file (`Prefetcher(loader)`) and `iter(...)`: only the small subtrees those lead to."""

    def __init__(self, model: FileModel) -> None:
        self.model = model
        self.sites: Dict[int, CallSite] = {id(s.node): s for s in model.calls_to(DATALOADER)}

    def resolve(self, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> List[CallSite]:
        if depth > 6 or not self.sites:
            return []
        model = self.model
        out: List[CallSite] = []
        for node in unwrap_iterable(expr):
            if isinstance(node, cst.Call):
                site = self.sites.get(id(node))
                if site is not None:
                    out.append(site)
                    continue
                func = node.func
                if isinstance(func, cst.Name) and model.imports.qualify(func) is None:
                    if func.value in model.facts.functions:
                        out.extend(self._returned(model.facts.functions[func.value], None, depth))
                    elif func.value in model.facts.classes:
                        for arg in node.args:
                            out.extend(self.resolve(arg.value, ctx, order, depth + 1))
                continue
            if isinstance(node, cst.IfExp):
                out.extend(self.resolve(node.body, ctx, order, depth + 1))
                out.extend(self.resolve(node.orelse, ctx, order, depth + 1))
                continue
            name = dotted_name(node)
            if name is not None:
                out.extend(self._name(name, ctx, depth))
        return out

    def _name(self, name: str, ctx: Context, depth: int) -> List[CallSite]:
        model = self.model
        found = model.assignments(name, ctx)
        out: List[CallSite] = []
        for assignment in found:
            value = assignment.value
            if value is None:
                continue
            if assignment.index is not None:
                if isinstance(value, (cst.Tuple, cst.List)):
                    if assignment.index < len(value.elements):
                        out.extend(self.resolve(value.elements[assignment.index].value, assignment.ctx, assignment.order, depth + 1))
                elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                    info = model.facts.functions.get(value.func.value)
                    if info is not None:
                        out.extend(self._returned(info, assignment.index, depth))
                continue
            out.extend(self.resolve(value, assignment.ctx, assignment.order, depth + 1))
        info = ctx.function
        if not found and info is not None and name in info.params:
            position = info.params.index(name) - (1 if info.class_name is not None else 0)
            for site in model.call_sites(info):
                arg = call_argument(site.node, name, position)
                if arg is not None:
                    out.extend(self.resolve(arg.value, site.ctx, site.order, depth + 1))
        return out

    def _returned(self, info: FunctionInfo, index: Optional[int], depth: int) -> List[CallSite]:
        body_ctx = Context(function=info, class_name=info.class_name)
        out: List[CallSite] = []
        for value in info.returns:
            if index is not None:
                if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements):
                    continue
                value = value.elements[index].value
            out.extend(self.resolve(value, body_ctx, 1 << 30, depth + 1))
        return out

    def iterated_by(self, loop: LoopInfo) -> List[CallSite]:
        node = loop.node
        if not isinstance(node, cst.For):
            return []
        return self.resolve(node.iter, loop.ctx, 1 << 30)


def names_in(node: cst.CSTNode) -> List[str]:
    return list(iter_names(node))


def mentions(model: FileModel, expr: cst.BaseExpression, ctx: Context, pattern: "re.Pattern[str]", depth: int = 0) -> bool:
    """A name matching ``pattern`` appears in the expression, or in the values of the names it
    uses (two assignments deep): `seed + rank`, `seed_offset` bound to `ddp_rank`."""
    for name in iter_names(expr):
        if pattern.search(name):
            return True
        if depth < 2:
            for assignment in model.assignments(name, ctx):
                if assignment.value is not None and mentions(model, assignment.value, assignment.ctx, pattern, depth + 1):
                    return True
    return False


def kwargs_value(model: FileModel, site: CallSite, key: str) -> Tuple[str, Optional[cst.BaseExpression]]:
    """``key`` in the call's `**kwargs`: ("absent" | "present" | "unknown", value)."""
    state = "absent"
    for arg in site.node.args:
        if arg.star != "**":
            continue
        value: Optional[cst.BaseExpression] = arg.value
        if not isinstance(value, (cst.Dict, cst.Call)):
            name = dotted_name(arg.value)
            found = model.assignments(name, site.ctx) if name else []
            if len(found) != 1 or (site.ctx.scope, name) in model.facts.subscript_stores:
                return "unknown", None
            if any(s.receiver_name == name for s in model.method_calls("update", "setdefault")):
                return "unknown", None
            value = found[0].value
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if not isinstance(element, cst.DictElement):
                    return "unknown", None
                if isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key:
                    return "present", element.value
        elif isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
            for a in value.args:
                if a.keyword is None:
                    return "unknown", None
                if a.keyword.value == key:
                    return "present", a.value
        else:
            return "unknown", None
    return state, None


class DdpWithoutDistributedSampler(Rule):
    code = "GPU502"
    name = "ddp-loader-without-distributed-sampler"
    summary = "DDP script whose training DataLoader has no DistributedSampler"
    what = """
        A `DataLoader` that feeds the training loop (a loop that runs `backward()` or an
        optimizer step iterates it, directly, through `next(...)` or inside a helper; failing
        that, the only loader built with `shuffle=True`) in a file that builds a
        `DistributedDataParallel` model or calls `init_process_group`, when the loader gets no
        `sampler=`, or a sampler that does not split the data between ranks
        (`RandomSampler`, `WeightedRandomSampler`, ...). A custom sampler of unknown kind is
        reported as information. Iterable datasets (they shard themselves), datasets already
        split by rank by hand, and loaders prepared by Lightning, Accelerate or the Hugging
        Face Trainer (they add the sampler) are left alone.
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
    requires = (("DataLoader",), ("DistributedDataParallel", "init_process_group"))

    VALID = [
        Case(
            """
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader, DistributedSampler
            dist.init_process_group("nccl")
            sampler = DistributedSampler(train_set)
            loader = DataLoader(train_set, batch_size=32, sampler=sampler, num_workers=4)
            model = DDP(net, device_ids=[rank])
            for epoch in range(10):
                sampler.set_epoch(epoch)
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            note="distributed sampler",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, DistributedSampler
            dist.init_process_group("nccl")
            train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set), batch_size=32)
            val_loader = DataLoader(val_set, batch_size=256)
            def evaluate(model, loader):
                with torch.no_grad():
                    for x, y in loader:
                        model(x)
            for x, y in train_loader:
                model(x).sum().backward()
                optimizer.step()
            evaluate(model, val_loader)
            """,
            note="validation loader without sampler, used under no_grad",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, IterableDataset
            class ShardedStream(IterableDataset):
                def __iter__(self):
                    rank, world = dist.get_rank(), dist.get_world_size()
                    for i, line in enumerate(open(self.path)):
                        if i % world == rank:
                            yield encode(line)
            dist.init_process_group("nccl")
            loader = DataLoader(ShardedStream(), batch_size=16)
            for batch in loader:
                loss = model(batch)
                loss.backward()
                optimizer.step()
            """,
            note="iterable dataset that shards per rank",
        ),
        Case(
            """
            from accelerate import Accelerator
            from torch.nn.parallel import DistributedDataParallel
            from torch.utils.data import DataLoader
            accelerator = Accelerator()
            loader = DataLoader(train_set, batch_size=32, shuffle=True)
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
            for batch in loader:
                accelerator.backward(model(**batch).loss)
                optimizer.step()
            """,
            note="Accelerate injects the sampler",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, Subset
            dist.init_process_group("gloo")
            rank, world_size = dist.get_rank(), dist.get_world_size()
            shard = Subset(dataset, range(rank, len(dataset), world_size))
            loader = DataLoader(shard, batch_size=64, shuffle=True)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="dataset split by rank by hand",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader, DistributedSampler
            def build_loader(ds, args):
                sampler = DistributedSampler(ds) if args.distributed else None
                return DataLoader(ds, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)
            def train_one_epoch(model, loader, optimizer):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            model = DDP(model)
            loader = build_loader(train_set, args)
            for epoch in range(args.epochs):
                loader.sampler.set_epoch(epoch)
                train_one_epoch(model, loader, optimizer)
            """,
            note="sampler only when distributed, through helpers",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            dist.init_process_group("nccl")
            loader = DataLoader(train_set, batch_sampler=DistributedBucketSampler(train_set, num_replicas=world, rank=rank))
            for batch in loader:
                model(batch).loss.backward()
                optimizer.step()
            """,
            note="custom batch sampler that takes the rank",
        ),
        Case(
            """
            import lightning as L
            from torch.utils.data import DataLoader
            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train_set, batch_size=64, shuffle=True)
            trainer = L.Trainer(strategy="ddp", devices=4)
            trainer.fit(model, Data())
            """,
            note="Lightning adds the sampler",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(train_set, batch_size=64, shuffle=True)
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="not a distributed script",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.utils.data import DataLoader
            dist.init_process_group("nccl")
            model = DDP(net.cuda(rank), device_ids=[rank])
            loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)  # expect: GPU502
            for epoch in range(10):
                for x, y in loader:
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
            """,
        ),
        Case(
            """
            import torch.distributed as dist
            import torch.utils.data as tud
            def make_loaders(args):
                train = tud.DataLoader(  # expect: GPU502
                    train_set,
                    batch_size=args.batch_size,
                    shuffle=True,
                )
                val = tud.DataLoader(val_set, batch_size=256)
                return train, val
            def train_one_epoch(model, loader, optimizer):
                for batch in loader:
                    model(**batch).loss.backward()
                    optimizer.step()
            def main():
                dist.init_process_group(backend="nccl")
                train_loader, val_loader = make_loaders(args)
                for epoch in range(args.epochs):
                    train_one_epoch(model, train_loader, optimizer)
            """,
            note="loader from a helper, iterated in another helper",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader, WeightedRandomSampler
            dist.init_process_group("nccl")
            sampler = WeightedRandomSampler(weights, num_samples=len(weights))
            loader = DataLoader(train_set, batch_size=32, sampler=sampler)  # expect: GPU502
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="a sampler that does not split by rank",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            dist.init_process_group("nccl")
            loader = DataLoader(train_set, batch_size=32, sampler=ImbalancedSampler(labels))  # expect: GPU502 info
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="custom sampler of unknown kind",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel
            from torch.utils.data import DataLoader
            model = DistributedDataParallel(model, device_ids=[local_rank])
            loader = DataLoader(train_set, batch_size=8, shuffle=True)  # expect: GPU502
            data_iter = iter(loader)
            for step in range(max_steps):
                x, y = next(data_iter)
                loss = model(x, y)
                loss.backward()
                optimizer.step()
            """,
            note="step loop drawing batches with next()",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            dist.init_process_group("nccl")
            loader_kwargs = dict(batch_size=64, shuffle=True, num_workers=8)
            train_loader = DataLoader(dataset, **loader_kwargs)  # expect: GPU502
            for images, labels in train_loader:
                criterion(model(images), labels).backward()
                optimizer.step()
            """,
            note="options in a kwargs dict",
        ),
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            dist.init_process_group("nccl")
            train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # expect: GPU502
            val_loader = DataLoader(val_set, batch_size=64)
            run(model, train_loader, val_loader)
            """,
            note="training loop out of sight: the only shuffling loader",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not is_ddp_script(model) or _framework_runs_epochs(model):
            return
        resolver = LoaderResolver(model)
        if not resolver.sites:
            return
        training: Dict[int, CallSite] = {}
        other_loops: Dict[int, List[LoopInfo]] = {}
        for loop in model.facts.loops:
            trains = model.is_training_loop(loop)
            for site in resolver.iterated_by(loop):
                if trains:
                    training[id(site.node)] = site
                else:
                    other_loops.setdefault(id(site.node), []).append(loop)
        for site in model.facts.calls_by_callee.get("next", ()):
            if site.node.args and model.in_training_code(site.ctx):
                for found in resolver.resolve(site.node.args[0].value, site.ctx, site.order):
                    training[id(found.node)] = found
        if not training:
            shuffled = [s for s in resolver.sites.values() if self._shuffles(s)]
            if len(shuffled) == 1:
                loops = other_loops.get(id(shuffled[0].node), [])
                if not loops or not all(loop.ctx.no_grad or (loop.function and loop.function.no_grad) for loop in loops):
                    training[id(shuffled[0].node)] = shuffled[0]
        for site in sorted(training.values(), key=lambda s: s.order):
            report = self._check_loader(model, site)
            if report is not None:
                yield report

    def _shuffles(self, site: CallSite) -> bool:
        arg = call_argument(site.node, "shuffle", 2)
        return arg is not None and literal_bool(arg.value) is True

    def _check_loader(self, model: FileModel, site: CallSite) -> Optional[Report]:
        call = site.node
        if self._dataset_shards_itself(model, site):
            return None
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
        verdict = self._sampler_kind(model, value, site.ctx, site.order)
        if verdict == "dist":
            return None
        if verdict == "plain":
            return self.report(
                call,
                f"`{snippet(model, value, 30)}` does not split the data between ranks: in this DDP script "
                "every rank iterates the whole dataset",
            )
        return self._custom(model, site, value, "sampler")

    def _custom(self, model: FileModel, site: CallSite, value: cst.BaseExpression, what: str) -> Optional[Report]:
        if self._sampler_kind(model, value, site.ctx, site.order) == "dist":
            return None
        return self.report(
            site.node,
            f"the {what} `{snippet(model, value, 30)}` is not a DistributedSampler: make sure it gives "
            "each rank its own share of the data",
            severity=Severity.INFO,
        )

    def _sampler_kind(self, model: FileModel, expr: cst.BaseExpression, ctx: Context, order: int, depth: int = 0) -> str:
        """"dist" (splits by rank), "plain" (a torch sampler that does not) or "unknown"."""
        if "dist_sampler" in model.kinds(expr, ctx, order):
            return "dist"
        if depth > 3:
            return "unknown"
        if isinstance(expr, cst.IfExp):
            kinds = {self._sampler_kind(model, b, ctx, order, depth + 1) for b in (expr.body, expr.orelse)}
            return "dist" if "dist" in kinds else ("plain" if kinds == {"plain"} else "unknown")
        if isinstance(expr, cst.Call):
            qual = model.imports.qualify(expr.func)
            if qual in _PLAIN_SAMPLERS:
                return "plain"
            name = dotted_name(expr.func) or ""
            info = model.facts.classes.get(name)
            if "Distributed" in name or (info is not None and any("Distributed" in b for b in info.bases)):
                return "dist"
            if any(mentions(model, a.value, ctx, _SHARD_WORD, 1) for a in expr.args):
                return "dist"
            if any(a.keyword is not None and a.keyword.value in ("num_replicas", "rank") for a in expr.args):
                return "dist"
            if name.endswith(("batch_sampler", "BatchSampler")) and any(
                self._sampler_kind(model, a.value, ctx, order, depth + 1) == "dist" for a in expr.args
            ):
                return "dist"
            return "unknown"
        name = dotted_name(expr)
        if name is None:
            return "unknown"
        found = [a for a in model.assignments(name, ctx) if a.value is not None and a.index is None]
        if not found:
            return "unknown"
        kinds = {self._sampler_kind(model, a.value, a.ctx, a.order, depth + 1) for a in found}
        return "dist" if "dist" in kinds else ("plain" if kinds == {"plain"} else "unknown")

    def _dataset_shards_itself(self, model: FileModel, site: CallSite) -> bool:
        arg = call_argument(site.node, "dataset", 0)
        if arg is None:
            return False
        if mentions(model, arg.value, site.ctx, _SHARD_WORD):
            return True
        values = [arg.value]
        name = dotted_name(arg.value)
        if name is not None:
            values.extend(a.value for a in model.assignments(name, site.ctx) if a.value is not None)
        for value in values:
            if not isinstance(value, cst.Call):
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
            if info is not None and any("IterableDataset" in b for b in info.bases):
                return True
        return False


_MAIN_ONLY_DECORATOR = re.compile(r"rank_zero|rank0|main_process|master_only|main_only", re.IGNORECASE)


def _exits(body: cst.BaseSuite) -> bool:
    """The block only leaves the function: `return`, `return None`, `sys.exit()`."""
    statements = body.body
    if len(statements) != 1:
        return False
    first = statements[0]
    small = first.body if isinstance(first, cst.SimpleStatementLine) else (first,)
    if len(small) != 1:
        return False
    stmt = small[0]
    if isinstance(stmt, cst.Return):
        return True
    return isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and last_segment(dotted_name(stmt.value.func)) == "exit"


def _not_main_test(test: cst.BaseExpression) -> bool:
    """`rank != 0`, `not is_main_process()`, `dist.get_rank() > 0`, `if local_rank:`: true off rank 0."""
    if not gate_kinds(test)[1]:
        return False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return True
    if isinstance(test, cst.Comparison):
        return all(
            isinstance(c.operator, (cst.NotEqual, cst.GreaterThan, cst.NotIn, cst.IsNot)) for c in test.comparisons
        )
    if isinstance(test, (cst.Name, cst.Attribute, cst.Call)):
        name = last_segment(dotted_name(test.func if isinstance(test, cst.Call) else test))
        return "rank" in name.lower()  # a rank number is truthy off rank 0
    return False


_DEVICE_INDEX = re.compile(r"(^|_)(gpu|gpu_id|device_id|rank)$", re.IGNORECASE)


def _zero_test(test: cst.BaseExpression) -> bool:
    """`gpu == 0`, `args.gpu in (0, -1)`, `device_id <= 0`: the first device of an `mp.spawn` worker."""
    if isinstance(test, cst.BooleanOperation):
        return _zero_test(test.left) or _zero_test(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    if not isinstance(comparison.operator, (cst.Equal, cst.In, cst.LessThanEqual)):
        return False
    left, right = test.left, comparison.comparator
    if last_segment(dotted_name(right)) and not last_segment(dotted_name(left)):
        left, right = right, left
    if not _DEVICE_INDEX.search(last_segment(dotted_name(left))):
        return False
    values = [e.value for e in right.elements] if isinstance(right, (cst.Tuple, cst.List)) else [right]
    return any(isinstance(v, cst.Integer) and v.value == "0" for v in values)


def _under_zero_test(info: FunctionInfo, target: cst.CSTNode) -> bool:
    """Inside the body of an `if gpu == 0:` in the function (walks that function's body only)."""
    stack: List[Tuple[cst.CSTNode, bool]] = [(info.node.body, False)]
    while stack:
        node, guarded = stack.pop()
        if node is target:
            return guarded
        if isinstance(node, cst.If):
            stack.append((node.body, guarded or _zero_test(node.test)))
            if node.orelse is not None:
                stack.append((node.orelse, guarded))
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend((child, guarded) for child in children(node))
    return False


def _main_only_before(info: FunctionInfo, target: cst.CSTNode) -> bool:
    """The function returns early off rank 0 (`if rank != 0: return`) before the statement that
    holds ``target``; or a main-process-only decorator (`@rank_zero_only`) wraps it."""
    if any(_MAIN_ONLY_DECORATOR.search(d) for d in info.decorators):
        return True
    body = info.node.body
    if not isinstance(body, cst.IndentedBlock):
        return False
    for statement in body.body:
        if isinstance(statement, cst.If) and statement.orelse is None and _not_main_test(statement.test):
            if _exits(statement.body):
                return True
        if contains(statement, target):
            return False
    return False


class CheckpointSavedOnEveryRank(Rule):
    code = "GPU504"
    name = "checkpoint-saved-on-every-rank"
    summary = "`torch.save` in a DDP script without a rank-0 guard"
    what = """
        `torch.save(...)` in a file that builds a `DistributedDataParallel` model or calls
        `init_process_group`, when neither the call nor every call site of the function that
        holds it (one level up) sits under a rank-0 test (`if rank == 0`,
        `if dist.get_rank() == 0`, `if is_main_process()`, `if args.local_rank in (-1, 0)`),
        and that function does not return early off rank 0 (`if rank != 0: return`) or carry
        a `@rank_zero_only`-style decorator; an `if gpu == 0:` around the save in an
        `mp.spawn` worker also counts. A save whose path names the rank (one file per rank, as
        sharded checkpoints do) is left alone. Reported as information when the saving
        function (other than `main`) has no call site in the file.
    """
    why = """
        Each process runs the save. With N ranks, N processes serialise the same weights and
        write the same path at the same moment: N times the I/O, a slower step, and a file
        that can end up truncated or mixed when two writers overlap on a shared filesystem.
    """
    example = """
        for epoch in range(epochs):
            train_one_epoch(model, loader, optimizer)
            torch.save(model.module.state_dict(), "checkpoint.pt")
    """
    instead = """
        for epoch in range(epochs):
            train_one_epoch(model, loader, optimizer)
            if dist.get_rank() == 0:
                torch.save(model.module.state_dict(), "checkpoint.pt")
            dist.barrier()  # others wait before reading it
    """
    hint = "save on rank 0 only (`if dist.get_rank() == 0:`), then `dist.barrier()` if others read the file"
    requires = (("save",), ("DistributedDataParallel", "init_process_group"))

    VALID = [
        Case(
            """
            import torch
            import torch.distributed as dist
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            for epoch in range(epochs):
                train(model)
                if rank == 0:
                    torch.save(model.module.state_dict(), "ckpt.pt")
            """,
            note="rank-0 guard",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            def save_checkpoint(state, path):
                torch.save(state, path)
            def main():
                dist.init_process_group("nccl")
                for epoch in range(args.epochs):
                    train(model)
                    if dist.get_rank() == 0:
                        save_checkpoint({"model": model.module.state_dict()}, "last.pt")
            """,
            note="every call site of the helper is guarded",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            def save_checkpoint(model, path):
                if dist.get_rank() != 0:
                    return
                torch.save(model.module.state_dict(), path)
            dist.init_process_group("nccl")
            save_checkpoint(model, "last.pt")
            """,
            note="early return off rank 0",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[args.local_rank])
            if args.local_rank in (-1, 0):
                torch.save(model.module.state_dict(), args.out)
            """,
            note="`local_rank in (-1, 0)` from argparse",
        ),
        Case(
            """
            import torch
            from accelerate import Accelerator
            accelerator = Accelerator()
            model = accelerator.prepare(model)
            accelerator.wait_for_everyone()
            accelerator.save(accelerator.unwrap_model(model).state_dict(), "model.pt")
            """,
            note="Accelerate saves on the main process",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            model = FSDP(net)
            torch.save(model.state_dict(), f"ckpt/shard_rank{rank}.pt")
            """,
            note="one file per rank",
        ),
        Case(
            """
            import torch
            def export(model, path):
                torch.save(model.state_dict(), path)
            export(model, "model.pt")
            """,
            note="not a distributed script",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            from lightning.pytorch.utilities import rank_zero_only
            @rank_zero_only
            def dump(state, path):
                torch.save(state, path)
            dist.init_process_group("nccl")
            dump(state, "s.pt")
            """,
            note="rank_zero_only decorator",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            class Trainer:
                def __init__(self):
                    dist.init_process_group("nccl")
                    self.is_main = dist.get_rank() == 0
                def save(self, path):
                    torch.save(self.model.module.state_dict(), path)
                def fit(self):
                    for epoch in range(self.epochs):
                        self.train_epoch()
                        if self.is_main:
                            self.save("last.pt")
            """,
            note="method guarded at its call site",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp
            def worker(gpu, args):
                dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)
                for epoch in range(args.epochs):
                    train(model, gpu)
                    if gpu == 0:
                        torch.save(model.module.state_dict(), "model.pt")
            mp.spawn(worker, args=(args,), nprocs=args.world_size)
            """,
            note="mp.spawn worker guarded by its device index",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            import torch.distributed as dist
            dist.init_process_group("nccl")
            for epoch in range(epochs):
                train(model)
                torch.save(model.module.state_dict(), f"epoch_{epoch}.pt")  # expect: GPU504
            """,
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def save_checkpoint(model, optimizer, path):
                state = {"model": model.module.state_dict(), "optim": optimizer.state_dict()}
                torch.save(state, path)  # expect: GPU504
            model = DDP(net, device_ids=[local_rank])
            for epoch in range(args.epochs):
                train(model)
                if local_rank == 0:
                    save_checkpoint(model, optimizer, "best.pt")
            save_checkpoint(model, optimizer, "last.pt")
            """,
            note="one call site of the helper is not guarded",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            def main():
                dist.init_process_group("nccl")
                rank = dist.get_rank()
                for epoch in range(args.epochs):
                    train(model)
                    if epoch % args.save_every == 0:
                        torch.save(model.module.state_dict(), "ckpt.pt")  # expect: GPU504
            """,
            note="a periodic test is not a rank test",
        ),
        Case(
            """
            import torch
            from torch import distributed as dist
            from torch.nn.parallel import DistributedDataParallel
            class Trainer:
                def __init__(self, model):
                    self.model = DistributedDataParallel(model)
                def save(self, path):
                    torch.save(  # expect: GPU504
                        {"model": self.model.module.state_dict(), "epoch": self.epoch},
                        path,
                    )
                def fit(self):
                    for epoch in range(self.epochs):
                        self.train_epoch()
                        self.save("last.pt")
            """,
            note="a trainer method called unguarded",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            def save_checkpoint(state, path):
                if dist.get_rank() == 0:
                    print("saving", path)
                torch.save(state, path)  # expect: GPU504
            dist.init_process_group("nccl")
            save_checkpoint(state, "a.pt")
            """,
            note="the guard covers only the print",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            def dump_checkpoint(state, path):
                torch.save(state, path)  # expect: GPU504 info
            dist.init_process_group("nccl")
            """,
            note="helper with no call site in the file",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            def save(model, path, rank):
                if rank == 0:
                    return
                torch.save(model.state_dict(), path)  # expect: GPU504
            dist.init_process_group("nccl")
            save(model, "m.pt", dist.get_rank())
            """,
            note="the early return leaves rank 0 out, not the others",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not is_ddp_script(model):
            return
        for site in model.calls_to("torch.save"):
            if self._guarded(model, site.ctx, site.node):
                continue
            if any(mentions(model, arg.value, site.ctx, _RANK_WORD, 1) for arg in site.node.args[1:]):
                continue  # one file per rank
            info = site.ctx.function
            severity = None
            if info is not None:
                callers = model.call_sites(info)
                if callers and all(self._guarded(model, c.ctx, c.node) for c in callers):
                    continue
                if not callers and info.node.name.value != "main":
                    severity = Severity.INFO  # who calls it, and how guarded, is out of sight
            yield self.report(
                site.node,
                "`torch.save` runs on every rank of this DDP script: each process writes the same "
                "checkpoint",
                severity=severity,
            )

    def _guarded(self, model: FileModel, ctx: Context, node: cst.CSTNode) -> bool:
        if ctx.rank_gated:
            return True
        info = ctx.function
        if info is None:
            return False
        return _main_only_before(info, node) or (ctx.conditional and _under_zero_test(info, node))


_FIND_UNUSED_OWNERS = frozenset({"DistributedDataParallel", "DistributedDataParallelKwargs", "DDPStrategy"})


class DataParallelOrFindUnused(Rule):
    code = "GPU505"
    name = "data-parallel-or-find-unused-parameters"
    summary = "`nn.DataParallel`, or DDP with `find_unused_parameters=True`"
    what = """
        Two costly data-parallel settings. `nn.DataParallel(...)` (any spelling, and the
        functional `data_parallel`) is a warning; it is information when the script only
        runs inference or pins it to a single device (`device_ids=[0]`).
        `find_unused_parameters=True` given literally to `DistributedDataParallel`,
        Accelerate's `DistributedDataParallelKwargs` or Lightning's `DDPStrategy` (also
        through a kwargs dict) is information: sometimes the model needs it.
    """
    why = """
        `DataParallel` is one process driving every GPU: each forward pass copies the weights
        to all devices, scatters the batch, gathers the outputs on the first GPU, and all of it
        runs under one Python GIL. DDP runs a process per GPU and overlaps the gradient
        all-reduce with the backward pass; PyTorch recommends it even on a single machine.
        `find_unused_parameters=True` makes DDP walk the autograd graph after every forward to
        find parameters that will get no gradient: an extra traversal per iteration that only
        models with unused branches need.
    """
    example = """
        model = nn.DataParallel(model).cuda()
        ...
        model = DDP(model, device_ids=[rank], find_unused_parameters=True)
    """
    instead = """
        # torchrun --nproc_per_node=4 train.py
        dist.init_process_group("nccl")
        model = DDP(model.to(rank), device_ids=[rank])
    """
    hint = "use DistributedDataParallel (one process per GPU); set `find_unused_parameters` only if DDP asks for it"
    requires = (("DataParallel", "data_parallel", "find_unused_parameters"),)

    VALID = [
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model.to(rank), device_ids=[rank])
            """,
            note="plain DDP",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[rank], find_unused_parameters=False)
            """,
            note="find_unused_parameters=False",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(model, device_ids=[rank], find_unused_parameters=args.find_unused)
            """,
            note="a configured value",
        ),
        Case(
            """
            import torch.nn as nn
            model = nn.DataParallel  # a reference, never called
            raw = model.module if isinstance(model, nn.DataParallel) else model
            """,
            note="isinstance check",
        ),
        Case(
            """
            import torch
            raw_model = model.module if hasattr(model, "module") else model
            torch.save(raw_model.state_dict(), "DataParallel_checkpoint.pt")
            """,
            note="only the word in a string",
        ),
        Case(
            """
            from accelerate import Accelerator, DistributedDataParallelKwargs
            kwargs = DistributedDataParallelKwargs(gradient_as_bucket_view=True)
            accelerator = Accelerator(kwargs_handlers=[kwargs])
            """,
            note="Accelerate DDP kwargs without find_unused_parameters",
        ),
        Case(
            """
            import torch.nn as nn
            class DataParallelWrapper(nn.Module):
                def __init__(self, module):
                    super().__init__()
                    self.module = module
            model = DataParallelWrapper(net)
            """,
            note="a class of the user's own",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch.nn as nn
            model = Net()
            if torch.cuda.device_count() > 1:
                model = nn.DataParallel(model)  # expect: GPU505
            model.to("cuda")
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
        ),
        Case(
            """
            import torch
            net = torch.nn.parallel.DataParallel(net, device_ids=list(range(args.ngpu)))  # expect: GPU505
            for x, y in loader:
                criterion(net(x), y).backward()
                optimizer.step()
            """,
            note="full dotted name",
        ),
        Case(
            """
            from torch.nn import DataParallel as DP
            model = DP(model, device_ids=[0])  # expect: GPU505 info
            for x, y in loader:
                criterion(model(x), y).backward()
                optimizer.step()
            """,
            note="a single device",
        ),
        Case(
            """
            import torch.nn as nn
            model = nn.DataParallel(load_model(args.ckpt)).cuda().eval()  # expect: GPU505 info
            with torch.no_grad():
                preds = [model(x.cuda()).argmax(1) for x, _ in loader]
            """,
            note="inference only",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(
                model,
                device_ids=[local_rank],
                find_unused_parameters=True,  # expect: GPU505 info
            )
            """,
            note="find_unused_parameters on its own line",
        ),
        Case(
            """
            import torch.nn as nn
            ddp_kwargs = {"device_ids": [rank], "find_unused_parameters": True}  # expect: GPU505 info
            model = nn.parallel.DistributedDataParallel(model, **ddp_kwargs)
            """,
            note="through a kwargs dict",
        ),
        Case(
            """
            from accelerate import Accelerator
            from accelerate.utils import DistributedDataParallelKwargs
            handler = DistributedDataParallelKwargs(find_unused_parameters=True)  # expect: GPU505 info
            accelerator = Accelerator(kwargs_handlers=[handler])
            """,
            note="Accelerate handler",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        inference_only: Optional[bool] = None
        for site in model.calls_to(_DATA_PARALLEL, "torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"):
            if inference_only is None:
                inference_only = not any(model.is_training_loop(loop) for loop in model.facts.loops) and not (
                    model.method_calls("backward")
                )
            devices = call_argument(site.node, "device_ids", 1 if site.qualname == _DATA_PARALLEL else 3)
            single = devices is not None and isinstance(devices.value, (cst.List, cst.Tuple)) and len(devices.value.elements) == 1
            if single:
                yield self.report(
                    site.node,
                    "DataParallel over a single device only adds overhead: call the model directly",
                    severity=Severity.INFO,
                )
            elif inference_only:
                yield self.report(
                    site.node,
                    "DataParallel replicates the model on every forward call and gathers outputs on one "
                    "GPU; for inference, one process per GPU over a shard of the data scales better",
                    severity=Severity.INFO,
                )
            else:
                yield self.report(
                    site.node,
                    "DataParallel drives every GPU from one process (weights copied each step, outputs "
                    "gathered on GPU 0): DistributedDataParallel is faster, even on one machine",
                )
        for qual, sites in model.facts.calls_by_qualname.items():
            if last_segment(qual) not in _FIND_UNUSED_OWNERS:
                continue
            for site in sites:
                arg = call_argument(site.node, "find_unused_parameters", 7 if last_segment(qual) == "DistributedDataParallel" else None)
                node: Optional[cst.CSTNode] = None
                if arg is not None:
                    if literal_bool(arg.value) is True:
                        node = arg
                else:
                    state, value = kwargs_value(model, site, "find_unused_parameters")
                    if state == "present" and value is not None and literal_bool(value) is True:
                        node = self._dict_element(model, site, value)
                if node is not None:
                    yield self.report(
                        node,
                        "`find_unused_parameters=True` makes DDP traverse the autograd graph after every "
                        "forward pass; keep it only if some parameters really get no gradient",
                        severity=Severity.INFO,
                    )

    def _dict_element(self, model: FileModel, site: CallSite, value: cst.BaseExpression) -> cst.CSTNode:
        """The `"find_unused_parameters": True` entry (or `find_unused_parameters=True` keyword) holding ``value``."""
        for arg in site.node.args:
            if arg.star != "**":
                continue
            candidates: List[cst.BaseExpression] = [arg.value]
            name = dotted_name(arg.value)
            if name is not None:
                candidates.extend(a.value for a in model.assignments(name, site.ctx) if a.value is not None)
            for holder in candidates:
                if isinstance(holder, cst.Dict):
                    for element in holder.elements:
                        if isinstance(element, cst.DictElement) and element.value is value:
                            return element
                if isinstance(holder, cst.Call):
                    for a in holder.args:
                        if a.value is value:
                            return a
        return site.node


_STEPPER = re.compile(r"optim|(^|_)opt($|_)|scaler", re.IGNORECASE)


def _modulo_in(model: FileModel, expr: cst.BaseExpression, ctx: Context, depth: int = 0) -> bool:
    """The test computes a `%` itself or through a name bound to one (`is_update = (i + 1) % k == 0`)."""
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            return True
        if isinstance(node, cst.Name) and depth < 2:
            for assignment in model.assignments(node.value, ctx):
                if assignment.value is not None and _modulo_in(model, assignment.value, assignment.ctx, depth + 1):
                    return True
        elif not isinstance(node, cst.Name):
            stack.extend(children(node))
    return False


class AccumulationWithoutNoSync(Rule):
    code = "GPU506"
    name = "ddp-accumulation-without-no-sync"
    summary = "gradient accumulation with DDP all-reduces on every micro-batch (no `no_sync()`)"
    what = """
        In a file that builds a `DistributedDataParallel` model, a training loop that runs
        `backward()` on every iteration but steps the optimizer only under a periodic test
        (`if (i + 1) % accum == 0`, or a flag computed from one), or steps it once after an
        inner loop of micro-batches, when the file never enters `model.no_sync()` and never
        sets `require_backward_grad_sync`. Reported at the `backward()` call. FSDP, Accelerate
        (`accelerator.accumulate`), Lightning and the Hugging Face Trainer, which handle
        accumulation themselves, are left alone.
    """
    why = """
        DDP all-reduces the gradients at the end of every `backward()`. While accumulating, only
        the last micro-batch before the optimizer step needs that exchange: the others pay a
        full gradient all-reduce across every GPU for nothing, which for large models or slow
        interconnects can cost more than the compute itself.
    """
    example = """
        for i, (x, y) in enumerate(loader):
            loss = criterion(model(x), y) / accum
            loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
    """
    instead = """
        for i, (x, y) in enumerate(loader):
            sync = (i + 1) % accum == 0
            with contextlib.nullcontext() if sync else model.no_sync():
                loss = criterion(model(x), y) / accum
                loss.backward()
            if sync:
                optimizer.step()
                optimizer.zero_grad()
    """
    hint = "run the non-final micro-batches under `with model.no_sync():` so gradients are reduced once per step"
    requires = (("backward",), ("DistributedDataParallel",), (".step(",))

    VALID = [
        Case(
            """
            import contextlib
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[rank])
            for i, (x, y) in enumerate(loader):
                sync = (i + 1) % accum == 0
                ctx = contextlib.nullcontext() if sync else model.no_sync()
                with ctx:
                    loss = criterion(model(x), y) / accum
                    loss.backward()
                if sync:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="no_sync through nullcontext",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[rank])
            for i, (x, y) in enumerate(loader):
                if (i + 1) % accum != 0:
                    with model.no_sync():
                        (criterion(model(x), y) / accum).backward()
                    continue
                (criterion(model(x), y) / accum).backward()
                optimizer.step()
                optimizer.zero_grad()
            """,
            note="no_sync on the micro-steps",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[ddp_local_rank])
            for it in range(max_iters):
                for micro_step in range(grad_accum):
                    model.require_backward_grad_sync = micro_step == grad_accum - 1
                    loss = model(*get_batch()) / grad_accum
                    loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            """,
            note="nanoGPT's require_backward_grad_sync",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[rank])
            for step, (x, y) in enumerate(loader):
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if step % 100 == 0:
                    log(loss)
            """,
            note="steps every iteration",
        ),
        Case(
            """
            from accelerate import Accelerator
            from torch.nn.parallel import DistributedDataParallel
            accelerator = Accelerator(gradient_accumulation_steps=4)
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
            for step, batch in enumerate(loader):
                with accelerator.accumulate(model):
                    accelerator.backward(model(**batch).loss)
                    if step % 4 == 0:
                        optimizer.step()
            """,
            note="Accelerate accumulates",
        ),
        Case(
            """
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
            model = FSDP(net)
            for i, batch in enumerate(loader):
                (model(batch).loss / accum).backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="FSDP",
        ),
        Case(
            """
            import torch.nn as nn
            model = nn.DataParallel(net)
            for i, (x, y) in enumerate(loader):
                (criterion(model(x), y) / accum).backward()
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="DataParallel has no all-reduce",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            netD, netG = DDP(netD), DDP(netG)
            for i, real in enumerate(loader):
                d_loss(netD, netG, real).backward()
                opt_d.step()
                if i % n_critic == 0:
                    g_loss(netD, netG).backward()
                    opt_g.step()
            """,
            note="GAN: one optimizer steps every iteration",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[rank])
            for i, (x, y) in enumerate(loader):
                loss = criterion(model(x), y) / accum
                loss.backward()  # expect: GPU506
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[local_rank])
            scaler = torch.amp.GradScaler()
            for step, batch in enumerate(train_loader):
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = model(**batch).loss / args.gradient_accumulation_steps
                scaler.scale(loss).backward()  # expect: GPU506
                if (step + 1) % args.gradient_accumulation_steps == 0 or step == len(train_loader) - 1:
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """,
            note="GradScaler, combined test",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net)
            for i, (x, y) in enumerate(loader):
                is_update = (i + 1) % accum == 0
                (criterion(model(x), y) / accum).backward()  # expect: GPU506
                if is_update:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="flag computed from a modulo",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            model = DDP(net, device_ids=[rank])
            for it in range(max_iters):
                for micro in range(accum):
                    x, y = next(batches)
                    loss = model(x, y) / accum
                    loss.backward()  # expect: GPU506
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            """,
            note="inner loop of micro-batches",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel
            def train_step(model, batch, accum):
                loss = model(batch).mean() / accum
                loss.backward()  # expect: GPU506
                return loss
            model = DistributedDataParallel(model)
            for i, batch in enumerate(loader):
                train_step(model, batch, accum)
                if (i + 1) % accum == 0:
                    optimizer.step()
                    optimizer.zero_grad()
            """,
            note="backward in a helper",
        ),
        Case(
            """
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Trainer:
                def __init__(self, net, rank):
                    self.model = DDP(net.to(rank), device_ids=[rank])
                def train_epoch(self, loader):
                    for i, batch in enumerate(loader):
                        self.compute_loss(batch).backward()  # expect: GPU506
                        if (i + 1) % self.accum_steps != 0:
                            continue
                        self.optimizer.step()
                        self.optimizer.zero_grad()
            """,
            note="continue-gated step in a method",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.calls_to(_DDP) or _framework_runs_epochs(model):
            return
        if model.method_calls("no_sync", "accumulate"):
            return
        if any(target.endswith("require_backward_grad_sync") for _, target in model.facts.assignments):
            return
        steps = [s for s in model.method_calls("step") if self._steps_optimizer(s)]
        if not steps:
            return
        backwards = model.method_calls("backward") + model.calls_to("torch.autograd.backward")
        reported: Set[int] = set()
        for loop in model.facts.loops:
            if not model.is_hot_loop(loop):
                continue
            found = self._periodic_steps(model, loop, steps, backwards) or self._micro_loop(model, loop, steps, backwards)
            if found is None or id(found[0].node) in reported:
                continue
            backward, step = found
            reported.add(id(backward.node))
            report = self.report(
                backward.node,
                "with DDP every `backward()` all-reduces the gradients, but the optimizer only steps at "
                "line {line}: the accumulation micro-batches pay for an all-reduce they do not need",
            )
            report.related = step.node
            yield report

    def _steps_optimizer(self, site: CallSite) -> bool:
        last = last_segment(site.receiver_name)
        return bool(last) and "sched" not in last.lower() and bool(_STEPPER.search(last))

    def _helper_sites(self, model: FileModel, loop: LoopInfo, sites: List[CallSite]) -> List[Tuple[CallSite, Context]]:
        """``sites`` directly in the loop body, paired with their context, and those at the top of a
        function the loop body calls, paired with the call's context."""
        out = [(s, s.ctx) for s in sites if s.ctx.loop is loop]
        callees: Dict[str, FunctionInfo] = {}
        for key in loop.callees:
            info = model.resolve(key)
            if info is not None:
                callees[info.key] = info
        for site in sites:
            info = site.ctx.function
            if info is None or site.ctx.loop is not None or info.key not in callees or info is loop.function:
                continue
            for call in model.call_sites(info):
                if call.ctx.loop is loop:
                    ungated = not (site.ctx.gated or site.ctx.gate_test is not None)
                    out.append((site, call.ctx if ungated else site.ctx))
        return out

    def _every_iteration(self, ctx: Context) -> bool:
        return not ctx.gated and ctx.gate_test is None and not ctx.no_grad

    def _periodic(self, model: FileModel, ctx: Context, loop: LoopInfo) -> bool:
        if ctx.gate_test is not None:
            return True
        if not (ctx.gated or ctx.conditional) or ctx.rank_gated:
            return False
        return any(
            c.kind == "if" and c.ctx.loop is loop and _modulo_in(model, c.test, c.ctx) for c in model.facts.conditions
        )

    def _periodic_steps(self, model, loop, steps, backwards) -> Optional[Tuple[CallSite, CallSite]]:
        step_sites = self._helper_sites(model, loop, steps)
        if not step_sites or not all(self._periodic(model, ctx, loop) for _, ctx in step_sites):
            return None
        for backward, ctx in self._helper_sites(model, loop, backwards):
            if self._every_iteration(ctx) and self._every_iteration(backward.ctx):
                return backward, step_sites[0][0]
        return None

    def _micro_loop(self, model, loop, steps, backwards) -> Optional[Tuple[CallSite, CallSite]]:
        own = [s for s in steps if s.ctx.loop is loop]
        if not own or not loop.own_step:
            return None
        for child in loop.children:
            if child.own_step or any(self._inside(s.ctx.loop, child) for s in steps):
                continue
            for backward in backwards:
                if backward.ctx.loop is child and self._every_iteration(backward.ctx):
                    return backward, own[0]
        return None

    def _inside(self, inner: Optional[LoopInfo], outer: LoopInfo) -> bool:
        while inner is not None:
            if inner is outer:
                return True
            inner = inner.parent
        return False


_GLOBAL_SEEDERS = frozenset(
    {
        "torch.manual_seed",
        "torch.random.manual_seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "random.seed",
        "numpy.random.seed",
        "transformers.set_seed",
        "transformers.trainer_utils.set_seed",
        "accelerate.utils.set_seed",
    }
)


class SameSeedOnEveryRank(Rule):
    code = "GPU507"
    name = "same-seed-on-every-rank"
    severity = Severity.INFO
    summary = "DDP script seeds every rank with the same constant"
    what = """
        In a file that builds a `DistributedDataParallel` model or calls `init_process_group`,
        a global seeding call (`torch.manual_seed`, `torch.cuda.manual_seed_all`,
        `random.seed`, `np.random.seed`, `transformers.set_seed`), directly or through a seeding
        helper of the file, given a literal or a module-level constant, when no seeding in the
        file adds a rank term (`seed + rank`, `seed + dist.get_rank()`,
        `args.seed + local_rank`). Reported once per file, at the first such call. Seeds from
        the command line (`args.seed`) and generator objects (`torch.Generator().manual_seed`)
        are left alone.
    """
    why = """
        Seeding every rank alike is right for the model's initial weights (DDP copies rank 0's
        weights anyway), but the seed also drives everything random afterwards: dropout masks,
        random augmentations, the seeds of DataLoader workers. Every GPU then draws the same
        random numbers in the same order, so the ranks' noise is correlated instead of
        independent, which quietly reduces what the extra GPUs add.
    """
    example = """
        dist.init_process_group("nccl")
        torch.manual_seed(42)
        model = DDP(build_model().to(rank), device_ids=[rank])
    """
    instead = """
        dist.init_process_group("nccl")
        torch.manual_seed(42)  # identical initial weights
        model = DDP(build_model().to(rank), device_ids=[rank])
        torch.manual_seed(42 + rank)  # independent dropout and augmentation per rank
    """
    hint = "after building the model, reseed with a rank term: `torch.manual_seed(seed + rank)`"
    requires = (("seed",), ("DistributedDataParallel", "init_process_group"))

    VALID = [
        Case(
            """
            import torch
            import torch.distributed as dist
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            torch.manual_seed(1234 + rank)
            """,
            note="rank term",
        ),
        Case(
            """
            import random
            import numpy as np
            import torch
            import torch.distributed as dist
            def set_seed(seed):
                random.seed(seed)
                np.random.seed(seed)
                torch.manual_seed(seed)
            dist.init_process_group("nccl")
            set_seed(42 + dist.get_rank())
            """,
            note="seeding helper called with a rank term",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            SEED = 0
            dist.init_process_group("nccl")
            torch.manual_seed(SEED)
            model = DDP(Net().cuda(local_rank))
            torch.manual_seed(SEED + local_rank)
            """,
            note="reseeded per rank after building the model",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            master_process = ddp_rank == 0
            seed_offset = ddp_rank
            dist.init_process_group("nccl")
            torch.manual_seed(1337 + seed_offset)
            """,
            note="nanoGPT's seed_offset",
        ),
        Case(
            """
            import torch
            torch.manual_seed(42)
            model = Net().cuda()
            """,
            note="not distributed",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            dist.init_process_group("nccl")
            g = torch.Generator().manual_seed(0)
            perm = torch.randperm(len(dataset), generator=g)
            """,
            note="a generator that must match on every rank",
        ),
        Case(
            """
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            torch.manual_seed(args.seed)
            model = DDP(Net().to(rank), device_ids=[rank])
            """,
            note="seed from the command line",
        ),
        Case(
            """
            from accelerate import Accelerator
            from accelerate.utils import set_seed
            from torch.nn.parallel import DistributedDataParallel
            set_seed(42, device_specific=True)
            """,
            note="Accelerate's per-device seed",
        ),
    ]
    INVALID = [
        Case(
            """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            dist.init_process_group("nccl")
            torch.manual_seed(42)  # expect: GPU507 info
            model = DDP(Net().to(rank), device_ids=[rank])
            """,
        ),
        Case(
            """
            import random
            import numpy as np
            import torch
            import torch.distributed as dist
            SEED = 2024
            def main():
                dist.init_process_group("nccl")
                random.seed(SEED)  # expect: GPU507 info
                np.random.seed(SEED)
                torch.cuda.manual_seed_all(SEED)
            """,
            note="module constant, reported once",
        ),
        Case(
            """
            import random
            import numpy as np
            import torch
            from torch.nn.parallel import DistributedDataParallel
            def seed_everything(seed=0):
                random.seed(seed)
                np.random.seed(seed)
                torch.manual_seed(seed)
            seed_everything(7)  # expect: GPU507 info
            model = DistributedDataParallel(model)
            """,
            note="seeding helper of the file",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            from transformers import set_seed
            dist.init_process_group(backend="nccl")
            set_seed(13)  # expect: GPU507 info
            """,
            note="transformers.set_seed",
        ),
        Case(
            """
            from torch import manual_seed
            from torch.distributed import init_process_group
            init_process_group("nccl")
            manual_seed(-1)  # expect: GPU507 info
            """,
            note="imported names",
        ),
        Case(
            """
            import torch
            import torch.distributed as dist
            class Trainer:
                def __init__(self, cfg):
                    dist.init_process_group("nccl")
                    self.rank = dist.get_rank()
                    torch.manual_seed(0)  # expect: GPU507 info
            """,
            note="rank known but not used in the seed",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not is_ddp_script(model):
            return
        seeds: List[Tuple[CallSite, cst.BaseExpression]] = []
        for site in model.calls_to(*_GLOBAL_SEEDERS):
            if site.qualname == "accelerate.utils.set_seed" and call_argument(site.node, "device_specific", 1) is not None:
                continue
            arg = call_argument(site.node, "seed", 0)
            if arg is not None:
                seeds.append((site, arg.value))
        helpers = self._helpers(model, seeds)
        for info, position in helpers.items():
            for site in model.call_sites(info):
                arg = call_argument(site.node, info.params[position], position - (1 if info.class_name else 0))
                if arg is not None:
                    seeds.append((site, arg.value))
        for site in model.method_calls("manual_seed", "seed"):
            if site.node.args and mentions(model, site.node.args[0].value, site.ctx, _RANK_WORD):
                return  # the file thinks about per-rank seeds somewhere
        if any(mentions(model, value, site.ctx, _RANK_WORD) for site, value in seeds):
            return
        constant = [
            (site, value)
            for site, value in seeds
            if site.ctx.function not in helpers and self._constant(model, value, site.ctx)
        ]
        if not constant:
            return
        site, value = min(constant, key=lambda pair: pair[0].order)
        yield self.report(
            site.node,
            f"every rank is seeded with the same `{snippet(model, value, 20)}`: dropout masks and random "
            "augmentations repeat across GPUs",
        )

    def _helpers(self, model: FileModel, seeds: List[Tuple[CallSite, cst.BaseExpression]]) -> Dict[FunctionInfo, int]:
        """Functions of the file that pass one of their parameters to a global seeder."""
        out: Dict[FunctionInfo, int] = {}
        for site, value in seeds:
            info = site.ctx.function
            if info is not None and isinstance(value, cst.Name) and value.value in info.params:
                out[info] = info.params.index(value.value)
        return out

    def _constant(self, model: FileModel, expr: cst.BaseExpression, ctx: Context) -> bool:
        if isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        if isinstance(expr, cst.Integer):
            return True
        if not isinstance(expr, cst.Name):
            return False
        info = ctx.function
        if info is not None and (expr.value in info.params or model.facts.assignments.get((info.key, expr.value))):
            return False
        found = model.facts.assignments.get((MODULE_SCOPE, expr.value), [])
        return bool(found) and all(isinstance(a.value, cst.Integer) and a.index is None for a in found)
