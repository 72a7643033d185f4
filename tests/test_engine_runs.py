"""The Ignite engine runs the value model finds (`advisor/model/engine_runs.py`): which `.run(...)`
calls are engine runs, whether the engine trains, and whether each epoch starts a new pass."""

from __future__ import annotations

import libcst as cst

from advisor.model import FileModel
from advisor.model.engine_runs import engine_runs
from advisor.model.loaders import loader_calls, loader_factory

SCRIPT = """\
import torch
from torch.utils.data import DataLoader
from ignite.engine import Engine, create_supervised_evaluator, create_supervised_trainer
from elsewhere import Runner

a = DataLoader(ds_a)
b = DataLoader(ds_b)
c = DataLoader(ds_c)
d = DataLoader(ds_d)
e = DataLoader(ds_e)

def train_step(engine, batch):
    loss = model(batch).mean()
    loss.backward()
    optimizer.step()

@torch.no_grad()
def eval_step(engine, batch):
    return model(batch)

class Tuner(Engine):
    pass

def epochs_from(n=10):
    return n

trainer = create_supervised_trainer(model, optimizer, criterion, device="cuda")
trainer.run(a, max_epochs=epochs_from())
create_supervised_evaluator(model, metrics={}).run(b, max_epochs=None)
Engine(eval_step).run(c, 5)
Tuner(train_step).run(d, max_epochs=1)
Runner(model).run(e, max_epochs=10)
trainer.run(e, max_epochs=50, epoch_length=100)
"""


def _runs():
    model = FileModel.build(cst.parse_module(SCRIPT))
    return [
        (model.code(run.loaders[0][0].node.args[0].value), run.build.kind, run.build.trains(), run.epochs)
        for run in engine_runs(model)
    ]


def test_engine_runs_know_their_engine_and_epochs():
    assert sorted(_runs()) == [
        ("ds_a", "trainer", True, True),  # epochs read through a helper's default
        ("ds_b", "evaluator", False, False),  # `max_epochs=None`: one epoch
        ("ds_c", "engine", False, True),  # a process function under no_grad does not train
        ("ds_d", "engine", True, False),  # a project subclass of Engine; one epoch
        ("ds_e", "trainer", True, False),  # a fixed epoch length (`Runner(...).run` is no engine)
    ]


FACTORIES = """\
import ignite.distributed as idist
from ignite.distributed import auto_dataloader
from ignite.engine import create_supervised_trainer
from torch.utils.data import DataLoader

def loaders(ds):
    return idist.auto_dataloader(ds, batch_size=8, num_workers=4), DataLoader(ds)

train, plain = loaders(ds)
other = auto_dataloader(ds)
not_a_loader = make_dataloader(ds)
trainer = create_supervised_trainer(model, optimizer, criterion, device="cuda")
trainer.run(train, max_epochs=5)
trainer.run(other, max_epochs=5)
trainer.run(not_a_loader, max_epochs=5)
"""


def test_loader_factories_are_loader_sites():
    model = FileModel.build(cst.parse_module(FACTORIES))
    sites = loader_calls(model)
    assert [model.line_of(s.node) for s in sites] == [7, 7, 10]
    assert [loader_factory(s) is not None for s in sites] == [False, True, True]
    assert all(loader_factory(s).pins_on_cuda and loader_factory(s).distributed_sampler for s in sites[1:])
    runs = engine_runs(model)
    assert [(model.line_of(r.site.node), [model.line_of(s.node) for s in r.loaders[0]]) for r in runs] == [
        (13, [7]),
        (14, [10]),
    ]


TRAINERS = """\
import torch
from torch.utils.data import DataLoader
from ignite.engine import create_supervised_trainer
loader = DataLoader(ds)
device = "cuda" if torch.cuda.is_available() else "cpu"
create_supervised_trainer(model, optimizer, criterion, device=device).run(loader, max_epochs=3)
create_supervised_trainer(model, optimizer, criterion, "cuda", False, None, None, keep).run(loader, max_epochs=3)
create_supervised_trainer(model, optimizer, criterion, device="cpu", output_transform=keep).run(loader, max_epochs=3)
create_supervised_trainer(model, optimizer, criterion, **options).run(loader, max_epochs=3)
"""


def test_supervised_trainer_device_and_default_output_transform():
    model = FileModel.build(cst.parse_module(TRAINERS))
    builds = [run.build for run in engine_runs(model)]
    assert [b.copies_to_cuda() for b in builds] == [True, True, False, False]
    assert [b.item_every_iteration() for b in builds] == [True, False, False, False]
