"""Distributed training (GPU5xx)."""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Set

import libcst as cst

from advisor.model import CallSite, FileModel, LoopInfo
from advisor.model.facts import MODULE_SCOPE
from advisor.model.file_model import call_argument, iter_names, literal_bool
from advisor.model.names import DISTRIBUTED_SAMPLER, dotted_name
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule

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
