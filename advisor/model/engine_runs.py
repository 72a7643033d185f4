"""DataLoaders that a PyTorch Ignite engine iterates: `engine.run(loader, max_epochs=N)`.

The engine owns the loop, so the file shows no `for` over the loader. `Engine.run(data,
max_epochs=None, epoch_length=None)` goes over `data` once per epoch; with no `max_epochs` it
runs one epoch. What each iteration does with a batch depends on how the engine was built:

- `create_supervised_trainer(model, optimizer, loss_fn, device=None, ...)` trains, and copies
  each batch to `device` when one is given (`create_supervised_evaluator(model, metrics=None,
  device=None, ...)` the same, without training);
- `Engine(process_function)` / `DeterministicEngine(...)`, or a project class derived from them,
  hands each batch to `process_function(engine, batch)`: the engine trains when that function
  does (backward or an optimizer step, not under `no_grad`), and the batch goes where the
  function moves it.

An engine is found through the value model: the receiver of `.run(...)` is followed back to the
call that built it (through names, helper returns, parameters), so `trainer.run(loader)` after
`trainer = create_supervised_trainer(...)` is an engine run and `runner.run(loader)` of some
other object is not.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from advisor.model.devices import CUDA, device_kind
from advisor.model.facts import CallSite, Context, FunctionInfo
from advisor.model.literals import literal_values
from advisor.model.loaders import LOADERS, Sites, by_loader_site
from advisor.model.value_flow import Question, ValueFlow, argument
from advisor.model.vocabulary import ENGINE_EVALUATORS, ENGINE_TRAINERS, ENGINES

TRAINER, EVALUATOR, ENGINE = "trainer", "evaluator", "engine"


class EngineBuild:
    """The call that built an engine (``call``, in ``model``'s file) and what kind it is."""

    __slots__ = ("model", "call", "kind")

    def __init__(self, model, call: cst.Call, kind: str) -> None:
        self.model = model
        self.call = call
        self.kind = kind

    def device(self) -> Optional[cst.Arg]:
        """The `device=` argument of a supervised trainer or evaluator."""
        if self.kind == TRAINER:
            return argument(self.call, "device", 3)
        if self.kind == EVALUATOR:
            return argument(self.call, "device", 2)
        return None

    def copies_to_cuda(self) -> bool:
        """A supervised trainer or evaluator given a device that is CUDA: ignite's `prepare_batch`
        copies each batch there (never on a file that names no CUDA device: an XLA one, say)."""
        device = self.device()
        if device is None or not self.model.uses_cuda:
            return False
        site = self.model.site_of(self.call)
        return site is not None and device_kind(self.model, device.value, site.ctx, site.order) == CUDA

    def item_every_iteration(self) -> bool:
        """A supervised trainer left with ignite's default `output_transform`, `lambda x, y,
        y_pred, loss: loss.item()` (ignite/engine/__init__.py): each iteration turns the loss
        into a number, waiting for the step's kernels. Not when arguments come through
        `*args`/`**kwargs`."""
        if self.kind != TRAINER or any(a.star for a in self.call.args):
            return False
        return argument(self.call, "output_transform", 7) is None

    def process(self) -> Optional[FunctionInfo]:
        """The function of the file an `Engine(...)` hands each batch to."""
        if self.kind != ENGINE:
            return None
        arg = argument(self.call, "process_function", 0)
        if arg is None or not type(arg.value) is cst.Name:
            return None
        site = self.model.site_of(self.call)
        if site is None:
            return None
        return self.model.bindings.function(arg.value.value, site.ctx, site.order)

    def trains(self) -> bool:
        if self.kind == TRAINER:
            return True
        info = self.process()
        return info is not None and not info.no_grad and self.model.trains(info)


class EngineBuilds(Question[Tuple[EngineBuild, ...]]):
    key = "engine-builds"
    unknown: Tuple[EngineBuild, ...] = ()

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Tuple[EngineBuild, ...]]:
        if not type(expr) is cst.Call:
            return None
        model = flow.model
        kind = _kind(model, expr)
        if kind is not None:
            return (EngineBuild(model, expr, kind),)
        return None if flow.callee(expr, ctx, order) is not None else ()

    def combine(self, answers: Sequence[Tuple[EngineBuild, ...]]) -> Tuple[EngineBuild, ...]:
        out: List[EngineBuild] = []
        for found in answers:
            out.extend(b for b in found if not any(b.call is o.call for o in out))
        return tuple(out)


ENGINE_BUILDS = EngineBuilds()


def _kind(model, call: cst.Call) -> Optional[str]:
    qual = model.imports.qualify(call.func)
    if qual in ENGINE_TRAINERS:
        return TRAINER
    if qual in ENGINE_EVALUATORS:
        return EVALUATOR
    if qual in ENGINES:
        return ENGINE
    func = call.func
    if qual is None and type(func) is cst.Name:
        cls = model.facts.classes.get(func.value)
        if cls is not None and any(base in ENGINES for base in cls.bases):
            return ENGINE  # `class Trainer(Engine)`, built with its process function
    return None


class EngineRun:
    """`engine.run(data, ...)` (``site``, in ``model``'s file) on an engine ``build``.

    ``loaders``: the DataLoaders `data` may be. ``epochs``: whether each epoch starts a new pass
    over them: False for a single epoch (no `max_epochs`, or one that is at most 1) and for a
    literal `epoch_length` (ignite then draws on from the same iterator), True otherwise."""

    __slots__ = ("model", "site", "build", "loaders", "epochs")

    def __init__(self, model, site: CallSite, build: EngineBuild, loaders: Sites, epochs: bool) -> None:
        self.model = model
        self.site = site
        self.build = build
        self.loaders = loaders
        self.epochs = epochs


def _several_epochs(model, site: CallSite) -> bool:
    arg = argument(site.node, "max_epochs", 1)
    if arg is None:
        return False  # ignite runs one epoch
    length = argument(site.node, "epoch_length", 2)
    if length is not None and type(length.value) is cst.Integer:
        # A fixed number of iterations per epoch: the engine draws on from the same iterator
        # across epochs and starts a new pass only when the loader runs out.
        return False
    found = literal_values(model, arg.value, site.ctx, site.order)
    if found.only(None):
        return False
    ints = found.ints()
    return ints is None or max(ints) > 1


def engine_runs(model) -> List[EngineRun]:
    """The `engine.run(data, ...)` calls of this file whose receiver is an Ignite engine."""
    def compute(model) -> List[EngineRun]:
        out: List[EngineRun] = []
        for site in model.method_calls("run"):
            data = argument(site.node, "data", 0)
            if data is None or site.receiver is None:
                continue
            builds = model.values.ask(ENGINE_BUILDS, site.receiver, site.ctx, site.order)
            if not builds:
                continue
            loaders = model.values.ask(LOADERS, data.value, site.ctx, site.order)
            if not loaders[0]:
                continue
            epochs = _several_epochs(model, site)
            out.extend(EngineRun(model, site, build, loaders, epochs) for build in builds)
        return out

    return model.shared("engine-runs", compute)


def engine_runs_over(model, site: CallSite) -> List[EngineRun]:
    """The engine runs, in this file and in the project files around it, that may iterate a
    DataLoader site of this file."""
    index = by_loader_site(model, "engine-runs-over", lambda other: ((run, run.loaders[0]) for run in engine_runs(other)))
    return index.get(id(site), [])
