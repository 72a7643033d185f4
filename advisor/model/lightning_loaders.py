"""Loaders a Lightning `Trainer` trains from: what a `LightningDataModule`'s (or a
`LightningModule`'s) `train_dataloader()` hook returns, also through a method the class binds to
that hook in its `__init__` (`self.train_dataloader = self._train_dataloader`, as
latent-diffusion's `DataModuleFromConfig` does). The Trainer goes over such a loader once per
epoch and copies each batch to the module's device itself, so the loop that reads the batches is
in the library and no file of the project shows it. It copies them to the GPU when the run
names one: CUDA in the file or around it, or GPUs in a file that runs the Trainer.

Not in test code or the helpers of a `tests/` folder, whose runs exercise Lightning on tiny data.
Only the training hook: Lightning's validation passes run every epoch or every few thousand
steps, which the input-pipeline rules treat as evaluation, not as the per-step cost they report.
"""

from __future__ import annotations

import os
import re
from typing import FrozenSet, Iterator

import libcst as cst

from advisor.model.facts import ClassInfo, FunctionInfo
from advisor.model.framework_steps import framework_bases, lightning_runs, nearby_lightning_trainers
from advisor.model.names import dotted_name
from advisor.model.vocabulary import LIGHTNING, LIGHTNING_TRAINER_TEXT

_HOOK = "train_dataloader"
_LIGHTNING_BASES = frozenset({"LightningDataModule", "LightningModule"})


def lightning_training_loader(model, site) -> bool:
    """The loader site is what a Lightning training-data hook of its class returns, in a project
    that runs a Lightning `Trainer` (see the module doc)."""
    info = site.ctx.function
    if info is None or info.class_name is None or not model.uses_framework(*LIGHTNING) or _test_support(model):
        return False
    cls = model.facts.classes.get(info.class_name)
    if cls is None or not _returned(info, site):
        return False
    name = info.node.name.value
    if name != _HOOK and name not in _bound_to_hook(model, cls):
        return False
    return bool(framework_bases(model, cls, _LIGHTNING_BASES.__contains__)) and lightning_runs(model) and _on_gpu(model)


def _on_gpu(model) -> bool:
    """The run is on a GPU: CUDA is named in the file or around it, or a file that runs the
    Trainer names CUDA or GPUs (`gpus=`, `accelerator="gpu"`, a `--gpus` option)."""
    if model.cuda_in_project:
        return True
    if LIGHTNING_TRAINER_TEXT.search(model.text or "") and _GPU_TEXT.search(model.text or ""):
        return True
    project = model.project
    return any(_GPU_TEXT.search(project.text_of(path)) for path in nearby_lightning_trainers(model)
               if not _in_tests(project, path))


def lightning_reloads_loaders(model) -> bool:
    """A file that runs the Trainer asks it to build its loaders again every few epochs
    (`reload_dataloaders_every_n_epochs`, `reload_dataloaders_every_epoch`)."""
    texts = [model.text or ""] + [model.project.text_of(p) for p in nearby_lightning_trainers(model)]
    return any("reload_dataloaders_every" in text for text in texts)


_GPU_TEXT = re.compile(r"cuda|\bgpus?\b", re.IGNORECASE)


def _test_support(model) -> bool:
    """A test module, or a helper of the tests (`tests/helpers/boring_model.py`): the data module
    feeds test runs, which exercise Lightning on tiny data, not a training run."""
    if model.is_test_code:
        return True
    project, path = model.project, model.real_path
    return project is not None and path is not None and _in_tests(project, path)


def _in_tests(project, path: str) -> bool:
    """The file sits in a `tests/` (or `test/`) folder of the project, or is named as a test."""
    name = os.path.basename(path)
    folders = os.path.relpath(os.path.dirname(path), project.layout.root).split(os.sep)
    return "tests" in folders or "test" in folders or name.startswith("test_") or name.endswith("_test.py")


def _returned(info: FunctionInfo, site) -> bool:
    """The call is what the function returns: `return DataLoader(...)`, or a name bound to it
    that a `return` hands back."""
    node = site.node
    name = site.assigned_to
    for value in info.returns:
        if value is node or (name and type(value) is cst.Name and value.value == name):
            return True
    return False


def _bound_to_hook(model, cls: ClassInfo) -> FrozenSet[str]:
    """The methods the class binds to its training-data hook (`self.train_dataloader =
    self._train_dataloader`, or `partial(self._train_dataloader, ...)`)."""
    return frozenset(_bindings(model, cls))


def _bindings(model, cls: ClassInfo) -> Iterator[str]:
    for info in model.facts.function_defs.get(f"{cls.name}.__init__", ()):
        for binder in info.binders:
            if type(binder) is not cst.Assign or len(binder.targets) != 1:
                continue
            if dotted_name(binder.targets[0].target) != "self." + _HOOK:
                continue
            value = binder.value
            if type(value) is cst.Call and value.args and dotted_name(value.func) in ("partial", "functools.partial"):
                value = value.args[0].value
            bound = dotted_name(value)
            if bound is not None and bound.startswith("self.") and bound.count(".") == 1:
                yield bound[len("self."):]


