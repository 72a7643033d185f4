"""Callers of functions whose name is defined many times in one file (a script pasted again
and again, generated code): each function gets exactly the calls that run it, and the calls of
a name are resolved once for all functions of that name, not once per function."""

from __future__ import annotations

import libcst as cst

from advisor.model import FileModel
from advisor.model.calls import CallGraph

SCRIPT = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        return x * 2


def step(model, batch):
    return model(batch).sum()


def train(loader):
    model = Net()
    for batch in loader:
        loss = step(model, batch)
        loss.backward()


train([torch.ones(2)])
"""


def _model(copies: int) -> FileModel:
    return FileModel.build(cst.parse_module(SCRIPT * copies), "f.py")


def _functions(model, name):
    return [info for defs in model.facts.function_defs.values() for info in defs if info.node.name.value == name]


def _expected_callers(model, info):
    """Every call of the file whose targets include ``info``, asked one call at a time."""
    name = info.node.name.value
    return [site for site in model.calls.candidates(name)
            if any(owner is model and target is info for owner, target in model.calls.targets(site))]


def test_each_copy_of_a_repeated_function_gets_the_calls_that_run_it():
    model = _model(4)
    for name in ("step", "train", "forward"):
        functions = _functions(model, name)
        assert len(functions) == 4
        answers = [model.callers(info) for info in functions]
        for info, answer in zip(functions, answers):
            assert [site for _, site in answer] == _expected_callers(model, info)
        # The copies' calls are told apart: no call is given to two functions of the name.
        sites = [id(site) for answer in answers for _, site in answer]
        assert len(sites) == len(set(sites))
    # A module-level call runs the copy defined just above it; a call in a function's body runs
    # the definition bound when the script has run to its end: the last copy.
    assert [len(model.callers(info)) for info in _functions(model, "train")] == [1, 1, 1, 1]
    assert [len(model.callers(info)) for info in _functions(model, "step")] == [0, 0, 0, 4]


def test_the_calls_of_a_name_are_resolved_once_for_all_its_functions(monkeypatch):
    asked = []
    original = CallGraph.targets

    def counting(self, site):
        asked.append(id(site))
        return original(self, site)

    monkeypatch.setattr(CallGraph, "targets", counting)
    copies = 12
    model = _model(copies)
    for info in _functions(model, "train"):
        model.callers(info)
    candidates = len(model.calls.candidates("train"))
    assert candidates == copies
    # Asking for each function's callers one after another would ask copies * copies times.
    assert len(asked) <= 2 * candidates, len(asked)


HANDED = """\
import threading


def timed(closure):
    return closure()


def train(loader):
    def report():
        pass

    for batch in loader:
        def step():
            return batch

        def save():
            pass

        timed(step)
        timed(report)
        threading.Thread(target=save).start()
"""


def test_a_function_defined_in_a_loop_runs_where_the_loop_hands_it_over():
    model = FileModel.build(cst.parse_module(HANDED), "f.py")
    step, report, save = (_functions(model, name)[0] for name in ("step", "report", "save"))
    callers = [site for _, site in model.callers(step)]
    # The loop's call hands it over to be run there; `timed` calls its parameter, which runs it.
    assert [model.code(site.node) for site in callers] == ["timed(step)", "closure()"]
    # Defined before the loop: not rebuilt to be run there, but `timed` still calls it.
    assert [model.code(site.node) for _, site in model.callers(report)] == ["closure()"]
    assert model.callers(save) == []  # a keyword callback of a library class runs elsewhere (a thread)


TEMPLATE = """\
class Epoch:
    def batch_update(self, x):
        raise NotImplementedError

    def log(self, x):
        print(x)

    def run(self, loader):
        for x in loader:
            self.batch_update(x)
            self.log(x)


class TrainEpoch(Epoch):
    def batch_update(self, x):
        return x

    def log(self, x):
        pass
"""


def test_a_call_through_self_runs_the_subclasses_overrides():
    model = FileModel.build(cst.parse_module(TEMPLATE), "f.py")
    run = _functions(model, "run")[0]
    targets = {site.method: [t.key for _, t in model.calls.targets(site)] for site in run.sites}
    assert targets["batch_update"] == ["Epoch.batch_update", "TrainEpoch.batch_update"]
    # A method with a body of its own runs it, or the override for a subclass's instances.
    assert targets["log"] == ["Epoch.log", "TrainEpoch.log"]


MODULE_TEMPLATE = "import torch\n\n\n" + TEMPLATE.replace("class Epoch:", "class Epoch(torch.nn.Module):")


def test_a_module_subclass_override_of_a_method_with_a_body_is_not_a_target():
    """A subclass of a network that overrides one of its methods is most often an inference
    wrapper: the trained network's own method is what its forward runs."""
    model = FileModel.build(cst.parse_module(MODULE_TEMPLATE), "f.py")
    run = _functions(model, "run")[0]
    targets = {site.method: [t.key for _, t in model.calls.targets(site)] for site in run.sites}
    assert targets["batch_update"] == ["Epoch.batch_update", "TrainEpoch.batch_update"]
    assert targets["log"] == ["Epoch.log"]


def test_a_torch_object_method_is_not_the_one_method_of_that_name_in_the_file():
    source = """\
import torch


class Runner:
    def train(self, net, loader):
        model = torch.nn.DataParallel(net)
        for x in loader:
            model.train()
            runner.train(net, loader)
"""
    model = FileModel.build(cst.parse_module(source), "f.py")
    on_wrapper, on_unknown = [s for s in model.facts.calls if s.method == "train"]
    assert model.calls.targets(on_wrapper) == []
    assert [info.node.name.value for _, info in model.calls.targets(on_unknown)] == ["train"]


SETTINGS = """\
from torch import nn


class LinearDistance(nn.Module):
    def forward(self, a, b):
        return (a - b).pow(2).mean().cpu()


class SSIMDistance(nn.Module):
    def forward(self, a, b):
        return ssim(a.cpu().numpy(), b.cpu().numpy())


class Distance(nn.Module):
    def __init__(self, model="lin"):
        super().__init__()
        self.model = model
        if self.model == "lin":
            self.net = LinearDistance()
        elif self.model in ["ssim", "SSIM"]:
            self.net = SSIMDistance()
        self.head = nn.Identity() if self.model != "lin" else nn.Identity()

    def forward(self, a, b):
        return self.net(a, b)


percept = Distance(model="lin")
"""


def test_a_module_picked_by_a_setting_no_construction_passes_is_not_called():
    """`self.net` is built in the branches of a string setting; every construction passes
    "lin", so `self.net(a, b)` runs LinearDistance's forward only."""
    model = FileModel.build(cst.parse_module(SETTINGS), "settings.py")
    site = next(s for s in model.facts.calls if s.method == "net")
    assert [info.class_name for _, info in model.calls.targets(site)] == ["LinearDistance"]


def test_without_a_known_setting_every_branch_counts():
    text = SETTINGS.replace('percept = Distance(model="lin")', "percept = Distance(model=args.metric)")
    model = FileModel.build(cst.parse_module(text), "settings.py")
    site = next(s for s in model.facts.calls if s.method == "net")
    assert sorted(info.class_name for _, info in model.calls.targets(site)) == ["LinearDistance", "SSIMDistance"]


def test_a_call_of_another_class_of_the_same_name_leaves_the_constructions_known():
    # `from .resnet import Bottleneck as _Bottleneck`, then `class Bottleneck(_Bottleneck)`; a head
    # builds that subclass by its name: a construction of another class, not an unknown one, so
    # the base's constructions stay the subclass's `super().__init__` and the head's own call.
    from pathlib import Path

    from advisor.budget import run_bounded
    from advisor.config import Config
    from advisor.engine import _neighbour_builder
    from advisor.project.view import forget_views, project_view

    root = Path(__file__).resolve().parent / "corpus" / "projects" / "alias_subclasses"
    path = str(root / "nets" / "backbones" / "resnet.py")

    def constructions():
        forget_views()
        view = project_view(path, _neighbour_builder(Config()), (str(root),))
        model = view.model(path)
        init = model.facts.functions["Bottleneck.__init__"]
        return [(owner.path.rsplit("/", 1)[-1], owner.code(site.node)) for owner, site in
                model.calls.constructions(init, through_subclasses=True)]

    assert sorted(run_bounded(constructions)) == [
        ("heads.py", "resnet.Bottleneck(channels, channels)"),
        ("resnext.py", "super().__init__(inplanes, planes, **kwargs)"),
    ]


CALLBACKS = """\
class Trainer:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader

    def train(self, get_loss, epochs=1):
        for epoch in range(epochs):
            for batch in self.loader:
                loss = get_loss(self.model, batch)
                loss.backward()

    def run(self, step_func=None):
        for batch in self.loader:
            step_func(batch)


def main(model, loader):
    def get_loss(model, batch):
        return model(batch).mean()

    def forward_step(batch):
        return batch

    trainer = Trainer(model, loader)
    trainer.train(get_loss)
    trainer.run(step_func=forward_step)
"""


def test_a_function_handed_by_name_runs_where_its_parameter_is_called():
    model = FileModel.build(cst.parse_module(CALLBACKS), "f.py")
    get_loss, forward_step = (_functions(model, name)[0] for name in ("get_loss", "forward_step"))
    assert [model.code(site.node) for _, site in model.callers(get_loss)] == ["get_loss(self.model, batch)"]
    assert [model.code(site.node) for _, site in model.callers(forward_step)] == ["step_func(batch)"]
    call = next(s for s in model.facts.calls if model.code(s.node) == "get_loss(self.model, batch)")
    assert [info.node.name.value for _, info in model.calls.targets(call)] == ["get_loss"]


def test_a_backward_only_pass_run_every_few_steps_is_no_training_loop():
    # `if iteration % eval_every == 0: gradient_report(model, test_batches)` in the batch loop:
    # the report's loop runs backward for input gradients; the steps around its call do not make
    # it a training loop (nor its body hot in its own right).
    from pathlib import Path

    from advisor.budget import run_bounded
    from advisor.config import Config
    from advisor.engine import _neighbour_builder
    from advisor.project.view import forget_views, project_view

    root = Path(__file__).resolve().parent / "corpus" / "projects" / "periodic_attack_eval"
    path = str(root / "attacks.py")

    def loops():
        forget_views()
        view = project_view(path, _neighbour_builder(Config()), (str(root),))
        model = view.model(path)
        return [(loop.function.key, model.is_training_loop(loop)) for loop in model.facts.loops]

    assert run_bounded(loops) == [("gradient_report", False)]


def test_a_network_that_freezes_its_own_parameters_is_built_frozen():
    # `FeatureNet()` leaves `requires_grad=False`, which `__init__` applies to every parameter:
    # calling it records no graph (GPU601). `ProbeNet(requires_grad=True)` is built trainable.
    from pathlib import Path

    from advisor.budget import run_bounded
    from advisor.config import Config
    from advisor.engine import _neighbour_builder
    from advisor.model.frozen_modules import built_frozen
    from advisor.project.view import forget_views, project_view

    root = Path(__file__).resolve().parent / "corpus" / "projects" / "frozen_feature_net"
    path = str(root / "stats.py")

    def frozen():
        forget_views()
        view = project_view(path, _neighbour_builder(Config()), (str(root),))
        model = view.model(path)
        calls = [s for s in model.facts.calls if s.qualname is None and model.code(s.node.func) in ("extractor", "probe")]
        return sorted((model.code(s.node.func), built_frozen(model, s.node.func, s.ctx, s.order)) for s in calls)

    assert run_bounded(frozen) == [("extractor", True), ("probe", False)]


def test_a_flag_a_helper_module_sets_for_one_rank_is_a_rank_test():
    # `init_dist(opt)` in utils/env.py sets `opt.log = True` only under `if opt.rank % n == 0:`:
    # `if opt.log:` in the training script runs on one process per node.
    from pathlib import Path

    from advisor.budget import run_bounded
    from advisor.config import Config
    from advisor.engine import _neighbour_builder
    from advisor.model.guards import guards_of
    from advisor.project.view import forget_views, project_view

    root = Path(__file__).resolve().parent / "corpus" / "projects" / "rank_flag_helper"
    path = str(root / "train.py")

    def kinds():
        forget_views()
        view = project_view(path, _neighbour_builder(Config()), (str(root),))
        model = view.model(path)
        out = []
        for site in model.calls_to("torch.save"):
            guards = [g for g in guards_of(site.ctx) if g.positive]
            out.append(any(model.guards.test_kinds(g.test, g.ctx, g.order + 0.5)[1] for g in guards))
        return out

    assert run_bounded(kinds) == [True, False]
