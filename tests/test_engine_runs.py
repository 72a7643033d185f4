"""The Ignite engine runs the value model finds (`advisor/model/engine_runs.py`): which `.run(...)`
calls are engine runs, whether the engine trains, and whether each epoch starts a new pass."""

from __future__ import annotations

import libcst as cst

from advisor.model import FileModel
from advisor.model.engine_runs import engine_runs

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
