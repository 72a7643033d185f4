"""GPU202 `dataloader-without-workers`: training DataLoader loads batches in the main process (`num_workers` missing or 0)."""

from __future__ import annotations
import re
from typing import Iterator
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, FileModel, Heat
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import dotted_name
from advisor.rules.base import Report, Rule
from advisor.rules.pipeline.loader_literals import loader_options
from advisor.model.engine_runs import engine_runs_over
from advisor.model.loaders import dataloader_calls, loader_consumers, loaders_iterated
from advisor.model.call_options import ABSENT, PRESENT, UNKNOWN
from advisor.rules.pipeline.loader_flow import (
    batches_go_to_device, built_on_device, dataset_on_device, dataset_value, is_device_move, iterable_dataset, tensor_datasets,
    library_stream, loader_option, one_pass_beside_training, only_peeked_now_and_then, read_for_a_person,
)
from advisor.model.lightning_loaders import lightning_training_loader
from advisor.model.vocabulary import EVAL_LOADER_NAME, PLACEMENT_TEXT
from advisor.model.datasets import collates_onto_device, holds_in_memory, prefetches_to_device, prepared_hf_table, tokenised_library_table


_EVAL_NAME = EVAL_LOADER_NAME


_TRAIN_NAME = re.compile(r"train", re.IGNORECASE)


def _cuda_in_loading(model: FileModel, site: CallSite) -> bool:
    """The dataset's `__getitem__`/`__iter__` or the `collate_fn` moves data to the GPU: worker
    processes could not do that, so the main process has to load."""
    keys = set()
    value = dataset_value(model, site)
    if type(value) is cst.Call:
        name = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
        keys |= {f"{name}.__getitem__", f"{name}.__iter__", f"{name}.__getitems__"}
    if collates_onto_device(model, site.node, site.ctx, site.order):
        return True
    dataset = call_argument(site.node, "dataset", 0)
    if dataset is not None and prefetches_to_device(model, dataset.value, site.ctx, site.order):
        return True  # the dataset copies its batches on a side CUDA stream, from its own thread
    collate = call_argument(site.node, "collate_fn", 6)
    if collate is not None:
        if type(collate.value) is cst.Lambda:
            return built_on_device(model, collate.value.body, site)
        name = dotted_name(collate.value)
        if name is not None:
            keys.add(name.rsplit(".", 1)[-1] if name.startswith("self.") else name)
    if not keys:
        return False
    for move in model.method_calls("cuda", "to", "type"):
        function = move.ctx.function
        if function is not None and (function.key in keys or function.node.name.value in keys):
            if is_device_move(model, move):
                return True
    return False


def _in_memory_dataset(model: FileModel, site: CallSite) -> bool:
    """A `TensorDataset`, a dataset class of the project that only indexes what it holds, a
    Hugging Face table prepared with `.map(...)` before training (tokenised text), or one of
    `transformers`' datasets that tokenise their corpus when built (`GlueDataset`)."""
    if tensor_datasets(model, site):
        return True
    arg = call_argument(site.node, "dataset", 0)
    if arg is not None and model.kinds(arg.value, site.ctx, site.order).get("tensor_dataset"):
        return True  # handed in as a parameter: `train(args, train_dataset, ...)`
    return arg is not None and (
        holds_in_memory(model, arg.value, site.ctx, site.order)
        or prepared_hf_table(model, arg.value, site.ctx, site.order)
        or tokenised_library_table(model, arg.value, site.ctx, site.order)
    )


def _loader_label(model: FileModel, site: CallSite) -> str:
    """The name a DataLoader is known by: its assignment target, else its dataset argument."""
    if site.assigned_to:
        return site.assigned_to
    if site.ctx.function is not None and site.outer is None:
        return site.ctx.function.node.name.value
    return ""


def _eval_only(model: FileModel, site: CallSite) -> bool:
    """A loader named for validation or testing (`val_loader`, `DataLoader(test_set)`), with
    nothing that says it trains (`shuffle=True`, unless the loader itself is named for
    evaluation: `val_loader = DataLoader(val_set, shuffle=True)` draws random samples to show;
    a `train` in its names)."""
    label = _loader_label(model, site)
    labels = [label]
    dataset = call_argument(site.node, "dataset", 0)
    if dataset is not None:
        labels.append(dotted_name(dataset.value) or "")
    shuffle = call_argument(site.node, "shuffle", 2)
    if shuffle is not None and literal_bool(shuffle.value) is True and not _EVAL_NAME.search(label.rsplit(".", 1)[-1]):
        return False
    if any(_TRAIN_NAME.search(label) for label in labels):
        return False
    return any(_EVAL_NAME.search(label.rsplit(".", 1)[-1]) for label in labels if label)


def _trains_batches(model: FileModel, loop) -> bool:
    """The loop trains on its batches, runs inside a loop that trains, or sits in code that
    trains or runs on every step: not an evaluation loop in a helper the training loop calls
    only every few thousand steps."""
    if model.is_training_loop(loop):
        return True
    enclosing = model.enclosing_training_loop(loop.ctx)
    if enclosing is not None:
        # An epoch loop's pass that backpropagates nothing beside its training loop (`for x, y
        # in eval_loader:` after it, under `no_grad`) evaluates once per epoch; so does one in
        # the batch loop under an occasional test (`if step % args.eval_freq == 1:`).
        if model.backpropagates(loop):
            return True
        return model.is_hot_loop(enclosing) and not model.guards.gated(loop.ctx)
    function = loop.ctx.function
    return function is not None and (model.trains(function) or model.heat_of(function) is Heat.HOT)


def _loader_uses(model: FileModel) -> dict:
    """For each DataLoader call that some loop iterates or draws batches from with `next()` (in
    this file or in the project files around it): "train" when a training loop does, else "eval"."""
    uses: dict = {}
    for loop in model.facts.loops:
        if not type(loop.node) is cst.For:
            continue
        training = _trains_batches(model, loop)
        sites, exhaustive = loaders_iterated(model, loop)
        for site in sites if exhaustive else ():
            if training or uses.get(id(site.node)) != "train":
                uses[id(site.node)] = "train" if training else "eval"
    for site in dataloader_calls(model):
        for other, loop in loader_consumers(model, site):
            if other is model and any(found is site for found in loaders_iterated(model, loop)[0]):
                continue  # this file's `for` loops: seen above
            training = _trains_batches(other, loop)
            if training or uses.get(id(site.node)) != "train":
                uses[id(site.node)] = "train" if training else "eval"
        for run in engine_runs_over(model, site):
            training = run.build.trains()
            if training or uses.get(id(site.node)) != "train":
                uses[id(site.node)] = "train" if training else "eval"
    return uses


class DataLoaderWithoutWorkers(Rule):
    code = "GPU202"
    name = "dataloader-without-workers"
    summary = "training DataLoader loads batches in the main process (`num_workers` missing or 0)"
    what = """
        A `DataLoader(...)` without `num_workers`, or with a literal `num_workers=0` (by keyword
        or as the sixth positional argument), in a file that copies its batches to a CUDA
        device. Loaders named for validation or testing (a `val_loader` that shuffles to show
        random samples too; a loader named by its dataset alone stops counting as one with
        `shuffle=True`), in-memory `TensorDataset`s (also one a
        helper of the project builds and returns, and one handed in as a parameter by every
        caller: `train(args, train_dataset, model)`) and
        dataset classes of the project that hold their samples the same way (a `__getitem__`
        that only indexes lists or tensors its `__init__` built, or, for a class that does
        nothing but hold and hand out samples, values every construction hands it where none
        is read from storage, `h5py`, a memory map; calling nothing but a
        method of its own that does the same and a few cheap steps on the row, `ex -=
        torch.mean(ex)`; also inherited
        through a subclass or picked from a dict of classes), `transformers`' datasets that
        tokenise their corpus when built (`GlueDataset`), datasets
        derived from `IterableDataset` (which shard their own streams; also a parameter
        annotated as one, `def run_training(self, dataset: IterableDataset)`) or made by a library
        of iterable pipes (torchtext, torchdata, webdataset), Hugging Face `datasets` tables
        tokenised ahead of training (`load_dataset(...).map(tokenize, batched=True)`, or a table formatted as tensors in place, `train_dataset.set_format(type="pt")`, in a file that tokenises, with no
        per-row `with_transform` other than one that only tokenises text, `preprocess_train`
        tokenising a prompt table's captions: a batch is rows read and padded), and frameworks that run
        the loop themselves (Lightning, which warns about a low worker count itself, the Hugging
        Face `Trainer`) are left alone. A loader
        handed to `accelerator.prepare(...)` counts: Accelerate copies its batches to the
        device but starts no workers. A `**kwargs` dict that cannot be resolved lowers the finding to info. A
        `num_workers` given as a variable counts when the analysis can read what it holds (a
        constant, a settings object, the default of a command-line option: the message then
        names the option; a shell script beside the script that passes the option, as a shipped
        `train.sh` does, or a command line a README documents for the script, `python train.py
        -j 4`, adds the value it passes) and is trusted otherwise; so is one a `**kwargs` dict gets on some
        paths only. A loader a PyTorch Ignite trainer runs (`create_supervised_trainer`, or an
        `Engine` whose process function trains) is a training loader whatever its name; one only
        an evaluator runs (`create_supervised_evaluator`, a process function under `no_grad`)
        is not. Batches are seen copied as for GPU201, with the same preload and unused-loader
        exceptions. A loader that only evaluation loops read (loops that neither train nor sit
        in a training loop, in code that neither trains nor runs on every step: an `evaluate()`
        the training loop calls every few thousand steps; a loop in the epoch loop beside the
        training loop that backpropagates nothing, such as a validation pass after each epoch's
        training, or one in the batch loop under an occasional test, `if step % args.eval_freq
        == 1:`) is an evaluation loader and is left alone too. A loader read only in a single pass beside the training (a loop inside no
        other loop, that does not train, in a function that trains in another loop or one
        called once beside it: class images generated before training, latents cached once),
        only peeked at every few steps, or read only by loops that wait for a person on each
        pass (a viewer waiting on a key) is info. A loader whose dataset or `collate_fn` moves
        data to the GPU (also a `collate_fn` handed in as `partial(collate, device=device)`, and
        a dataset class that opens a side CUDA stream to prefetch batches from its own thread)
        is left alone: worker processes could not make CUDA tensors.
    """
    why = """
        With no workers, reading, decoding and augmenting every sample happens in the training
        process itself, between optimizer steps: the GPU waits while the CPU prepares the next
        batch. Worker processes prepare batches in parallel and ahead of time, so the next
        batch is usually ready when the step ends.
    """
    example = """
        loader = DataLoader(train_set, batch_size=64, shuffle=True)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    """
    instead = """
        loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    """
    hint = "pass `num_workers=` (start near `os.cpu_count() // gpus_per_node`, often 4-8) and measure"
    fix_safety = """
        No automatic fix. The right worker count depends on the machine (cores per GPU, memory),
        and worker processes change behaviour the analysis cannot check: the dataset must be
        picklable under the `spawn` start method, and random augmentations need per-worker
        seeds.
    """
    references = (
        (
            "Performance Tuning Guide: enable asynchronous data loading and augmentation",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-asynchronous-data-loading-and-augmentation",
        ),
        (
            "torch.utils.data: multi-process data loading",
            "https://docs.pytorch.org/docs/stable/data.html#multi-process-data-loading",
        ),
    )
    requires = (("DataLoader",), PLACEMENT_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        # A Lightning Trainer checks the worker count of the loaders it draws from and warns
        # about too few itself: the run already says it (model/lightning_loaders.py).
        sites = [s for s in dataloader_calls(model) if batches_go_to_device(model, s)
                 and not lightning_training_loader(model, s)]
        if not sites:
            return
        uses = _loader_uses(model)
        for site in sites:
            use = uses.get(id(site.node))
            if use == "eval" or (use is None and _eval_only(model, site)):
                continue
            if _in_memory_dataset(model, site) or iterable_dataset(model, site) or library_stream(model, site):
                continue
            if dataset_on_device(model, site) or _cuda_in_loading(model, site):
                continue
            option = loader_option(model, site, "num_workers", 5)
            data = {"loader_options": loader_options(site.node)}
            if option.state == UNKNOWN and option.arg is None:
                yield self.report(
                    site.node,
                    "DataLoader options come from `**kwargs` that may not set `num_workers`: batches "
                    "may be loaded in the training process",
                    severity=Severity.INFO,
                    data=data,
                )
            elif option.state == ABSENT or (option.state == PRESENT and option.literals.ints() == (0,)):
                default_of = option.literals.option if option.state == PRESENT else None
                message = "DataLoader loads every batch in the training process (no worker processes) while the GPU waits"
                if default_of is not None:
                    data["default_of"] = default_of
                    message = (
                        "DataLoader loads every batch in the training process (`{default_of}` defaults to "
                        "no worker processes) while the GPU waits"
                    )
                # A loader read only by a peek every few steps, in one pass beside the training,
                # or by a viewer waiting for a key, loads its batches now and then: info.
                occasional = (
                    only_peeked_now_and_then(model, site) or one_pass_beside_training(model, site)
                    or read_for_a_person(model, site)
                )
                severity = Severity.INFO if occasional else None
                yield self.report(site.node, message, data=data, severity=severity)
