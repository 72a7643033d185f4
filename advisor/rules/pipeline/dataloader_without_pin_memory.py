"""GPU201 `dataloader-without-pin-memory`: DataLoader without `pin_memory=True` feeding a CUDA model."""

from __future__ import annotations

import dataclasses
from typing import Iterator, Optional
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.datasets import (collates_graphs, collates_onto_device, holds_id_tensors, holds_token_windows, tokenises_per_item,
                                    collates_to_arrays, items_on_device, passes_host_arrays, prefetches_to_device, tokenised_by_transform, prepared_hf_table, unpinnable_batch_class)
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.loaders import dataloader_calls
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.rules.call_layout import append_argument
from advisor.rules.pipeline.loader_flow import (
    batches_go_to_device, dataset_on_device, index_batches, tensors_of_unknown_place, loader_option, one_pass_beside_training, only_peeked_now_and_then, read_for_a_person, evaluation_loader_now_and_then, evaluated_every_few_epochs, handed_for_evaluation,
)
from advisor.rules.pipeline.loader_literals import loader_options
from advisor.model.call_options import PRESENT, SOMETIMES, UNKNOWN
from advisor.model.vocabulary import PLACEMENT_TEXT



# Loaders whose batches are read now and then, not on every step: information, with the reason.
_RARE_READS = (
    (one_pass_beside_training, "read in one pass beside the training, not on every step"),
    (evaluation_loader_now_and_then,
     "read by a short evaluation pass run every few steps or once per epoch, not on every step"),
    (evaluated_every_few_epochs, "read by a pass the epoch loop makes on some epochs only, not on every step"),
    (handed_for_evaluation,
     "handed to a trainer as its evaluation data: read by evaluation passes, not on every step"),
    (only_peeked_now_and_then, "read only now and then: a batch every few steps"),
)

class DataLoaderWithoutPinnedMemory(Rule):
    code = "GPU201"
    name = "dataloader-without-pin-memory"
    summary = "DataLoader without `pin_memory=True` feeding a CUDA model"
    what = """
        A `DataLoader(...)` (or a call of a project subclass that takes DataLoader's own
        arguments, such as a `DataLoaderX` whose only change is a background `__iter__`) with
        no `pin_memory=True` in a file that copies its batches to a CUDA device (not a loader
        over `range(n)`, whose batches are small index tensors that pick rows of tensors already
        placed) (also to a device read from the run's settings dict, `self.config["device"]`,
        in a project whose files name CUDA). A `**kwargs` dict built in the file is looked into, with the keys it gets
        on the CUDA path (`if use_cuda: kwargs.update(pin_memory=True)` counts as set); one that
        cannot be resolved lowers the finding to info. A `pin_memory` given as a variable or
        expression is trusted unless the analysis can read that it is False (a constant, a
        settings object). The False default of a command-line switch (`action="store_true"`) is
        reported as info only, naming the switch: the author left pinning to the run.
        Batches a PyTorch Ignite engine copies count too (`engine.run(loader, ...)`): those of
        `create_supervised_trainer`/`create_supervised_evaluator` given a `device` that is not
        the CPU, and those an `Engine(process_function)` hands to a function that moves them.
        Batches count as copied when a loop moves them itself (also with `.type(Tensor)` where
        `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`), maps a moving lambda over them
        (`map(lambda t: t.cuda(), (text, images))`), or hands them to a function of the file or
        of another project module that moves something (`model.parse_batch(batch)`; not one that
        first turns the batch into NumPy on the host and moves only new tensors made from it), or when
        the loader is handed to `accelerator.prepare(...)` (Accelerate copies each batch to the
        device, from whatever memory the loader gives it; not with
        `Accelerator(device_placement=False)`), or when a Lightning `Trainer` trains from it: the
        loader a `LightningDataModule`'s (or `LightningModule`'s) `train_dataloader()` returns,
        also through a method bound to that hook (`self.train_dataloader =
        self._train_dataloader`), in a project that runs a Trainer and names CUDA or GPUs
        (`accelerator="gpu"`, `--gpus`). A `webdataset.WebLoader` counts as a `DataLoader(...)`:
        it builds one from the same arguments. Over a Hugging Face table tokenised before
        training (`load_dataset(...).map(tokenize, batched=True)`, or a table formatted as tensors in place, `train_dataset.set_format(type="pt")`, in a file that tokenises) the finding is info: a batch
        of token ids is a few kilobytes (so it is over a dataset class that holds its ids in
        memory and hands out windows of them, `self.data[start: start + n].long()`, or tensors of the
        ids and labels of examples tokenised up front, `torch.tensor(self.examples[i].input_ids)`,
        over one whose `__getitem__` tokenises its text and builds only tensors of an integer dtype
        (`torch.tensor(ids, dtype=torch.long)` with its mask and labels), over datasets built
        with a `transform=` that tokenises each text into an integer tensor (also when
        concatenated, `in_test + out_test`), over a
        `TensorDataset` whose first tensor holds integer ids, and over `transformers`' datasets
        tokenised when built, `GlueDataset`); so it is
        for a loader whose `collate_fn` batches samples into DGL graphs (`dgl.batch`: pinning
        reaches tensors and objects with a `pin_memory()` method, and a DGL graph has none; for
        `dataset.collate`, every project method of that name must), or into a project class
        with no `pin_memory()` method (DETR's `NestedTensor`, also made by a class method that
        returns `cls(...)` and from a `collate_fn` bound with `partial` or from the `__call__`
        of a collator object of the project, or a class given as the `collate_fn` itself:
        `collate_fn=GraphBatch`; such a loader that sets `pin_memory=False`
        is not reported at all). Nor is a loader that hands its samples on as they are
        (`collate_fn=lambda x: x`, or a function that returns its argument) over a dataset whose
        `__getitem__` builds no tensor (NumPy arrays, images, paths): pinning finds nothing to
        pin. It is information for a loader whose `collate_fn` moves each
        batch to the GPU itself (`partial(pad_collate, device=device)` with a `.to(device)`
        inside: the loader yields device tensors, which pinning cannot take; no fix is offered),
        or over a dataset of the project whose `__getitem__` moves each item to the GPU
        (`torch.tensor(ids).to(device)`: the same, item by item), or over one of its classes
        that opens a side CUDA stream (a prefetching wrapper that pins and copies batches from
        its own thread: the loader hands on device tensors);
        so it is for a loader only peeked at every few steps
        (`next(iter(val_loader))` in a `sample_images()` run every 500 batches), and for one
        read in a single pass beside the training (a loop inside no other loop, that does not
        train, in a function that trains in another loop or in one called once beside such a
        loop: class images generated before training, latents cached once, a last test pass),
        for one read only by loops that wait for a person on each pass (a viewer that
        shows a batch and waits on `cv2.waitKey`, `input()` or `plt.show()`, also in a helper of the
        file it calls; `cv2.waitKey(1)`, a pause to draw a frame, is no wait), and for one read
        only by a short evaluation pass (a loop that can `break` after a few batches) the training
        loop runs every few steps (`if step % 500 == 0: evaluate(...)`, also written inline
        under such a test) or once per epoch, or by a pass that does not train and that the
        epoch loop makes on some epochs only (`if epoch in [10, 30, 100]:`, `if is_power2(epoch):`), or that
        the file hands to a trainer only under a keyword naming an evaluation
        (`Trainer(..., validation_data=test_loader)`); so is a `TensorDataset`
        of tensors not known to be in host memory (features a helper extracted, which may have
        been gathered on the GPU: pinning those would fail; also such a dataset a helper
        builds and returns), and no fix is offered. A loader
        of one batch that holds its whole dataset (`batch_size=len(train_set)`, a preload made
        once; also `batch_size=self.batch_size or len(self.trainset)`, the whole set unless a size
        is given), a loader bound to a name the file never mentions again (at the top of a notebook,
        or of a script no project file imports, too), and one drawn from once at
        the top of the script (`test_imgs, _ = next(iter(test_loader))`) or in the function that
        builds it, which no training loop runs (one batch for an initialising forward), or gone over only by
        loops that end in an unconditional `break` (one batch each, in a demo notebook), and
        one a function binds to a name it reads only as the iterable of its own loops, none of
        which moves a batch (a CPU lesson's `train_ch7` in a helper module whose other loops
        train on the GPU), are left alone. A
        move of a new host tensor the batch is first converted to
        (`inputs.type(torch.LongTensor).to(device)`, `video.half().cuda()`, also in a helper of another module the batch is handed to) is no move of the batch: pinned memory
        would never reach that copy.
        A loader built only under a switch no shipped run turns on (`if args.use_test_as_train:`
        after a `store_true` option no documented command passes) is info.
    """
    why = """
        The GPU can only read host memory that is page-locked. Batches in ordinary (pageable)
        memory are first copied by the CPU into a pinned staging buffer, then sent, and the
        call blocks the host meanwhile. With pinned batches the copy is a single DMA transfer
        that can run while the GPU computes, when combined with `non_blocking=True`.
    """
    example = """
        loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)
        for x, y in loader:
            x, y = x.to("cuda"), y.to("cuda")
    """
    instead = """
        loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
        for x, y in loader:
            x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
    """
    hint = "pass `pin_memory=True`, and copy with `.to(device, non_blocking=True)`"
    fixable = Fixable.SOMETIMES_SAFE_OR_UNSAFE
    fix_safety = """
        The fix adds `pin_memory=True` after the last argument. It is safe when the batches are
        CPU tensors (or containers of them, or objects with a `pin_memory()` method): pinning
        changes where the host copy lives, not its values. It assumes the batches are not
        already on the GPU (a `collate_fn` or dataset that returns CUDA tensors makes pinning
        fail; datasets moved to the device in the file are not reported) and that the machine
        can spare the page-locked memory: each worker's prefetched batches stay pinned.

        Offered as unsafe where the call says `pin_memory=False`: the author chose it, perhaps
        for the memory above. Not offered when the options come from a `**kwargs` dict the
        analysis cannot read, when the call has no argument to follow, or when the False comes
        from elsewhere (a variable, a settings object, an option's default): the change belongs
        there, and a command-line switch is the user's to flip.
    """
    references = (
        (
            "CUDA semantics: use pinned memory buffers",
            "https://docs.pytorch.org/docs/stable/notes/cuda.html#use-pinned-memory-buffers",
        ),
        ("torch.utils.data: memory pinning", "https://docs.pytorch.org/docs/stable/data.html#memory-pinning"),
        (
            "Performance Tuning Guide: enable asynchronous data loading and augmentation",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#enable-asynchronous-data-loading-and-augmentation",
        ),
        (
            "A guide on good usage of non_blocking and pin_memory()",
            "https://docs.pytorch.org/tutorials/intermediate/pinmem_nonblock.html",
        ),
    )
    requires = (("DataLoader",), PLACEMENT_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in dataloader_calls(model):
            if not batches_go_to_device(model, site):
                continue
            report = self._check_call(model, site)
            if report is not None:
                if report.severity is not Severity.INFO and model.guards.switched_off(site.ctx) is not None:
                    # Built under a setting no shipped run turns on (`if args.use_test_as_train:`).
                    report = dataclasses.replace(report, severity=Severity.INFO)
                yield report

    def _check_call(self, model: FileModel, site: CallSite) -> Optional[Report]:
        call = site.node
        if dataset_on_device(model, site) or index_batches(model, site):
            return None
        if passes_host_arrays(model, call, site.ctx, site.order) or collates_to_arrays(model, call, site.ctx, site.order):
            return None  # NumPy batches: pinning finds no tensor to pin
        data = {"loader_options": loader_options(call)}
        option = loader_option(model, site, "pin_memory", 7)
        if option.state == PRESENT:
            if not option.literals.only(False):
                return None  # True, or a value the analysis cannot read: trusted
            if (collates_graphs(model, call, site.ctx, site.order)
                    or unpinnable_batch_class(model, call, site.ctx, site.order) is not None):
                return None  # pinning would not reach its batches: turning it off is right
            default_of = option.literals.option
            arg = option.arg
            fix = None
            if arg is not None and literal_bool(arg.value) is False:
                fix = FixSpec(
                    "set `pin_memory=True`",
                    (NodeEdit(arg.value, "True"),),
                    Applicability.UNSAFE,  # the author chose False explicitly
                )
            message = (
                "DataLoader sets `pin_memory=False` while its batches go to the GPU: each copy "
                "is staged through pageable memory and blocks the host"
            )
            if default_of is not None:
                data["default_of"] = default_of
                message = (
                    "DataLoader does not pin memory unless the run passes `{default_of}` (its default is "
                    "False) while its batches go to the GPU: each copy is staged through pageable memory "
                    "and blocks the host"
                )
                # A switch for pinning is the author's considered choice to leave it to the run.
                return self.report(call, message, severity=Severity.INFO, data=data)
            return self.report(call, message, fix=fix, data=data)
        if option.state == SOMETIMES:
            return None  # set on some paths: trusted, as a variable is
        if option.state == UNKNOWN:
            if any(a.star == "*" for a in call.args):
                return self.report(call, "cannot tell whether this DataLoader pins memory", severity=Severity.INFO,
                                   data=data)
            return self.report(
                call,
                "DataLoader options come from `**kwargs` that may not set `pin_memory=True`; "
                "its batches go to the GPU",
                severity=Severity.INFO,
                data=data,
            )
        dataset = call_argument(call, "dataset", 0)
        if dataset is not None and items_on_device(model, dataset.value, site.ctx, site.order):
            return self.report(
                call,
                "DataLoader without `pin_memory=True`: its dataset's `__getitem__` moves each item to "
                "the GPU itself (pinning cannot take device tensors)",
                severity=Severity.INFO,
                data=data,
            )
        if dataset is not None and prefetches_to_device(model, dataset.value, site.ctx, site.order):
            return self.report(
                call,
                "DataLoader without `pin_memory=True`: its dataset copies each batch to the GPU "
                "itself, on a side CUDA stream (pinning cannot take device tensors)",
                severity=Severity.INFO,
                data=data,
            )
        if collates_onto_device(model, call, site.ctx, site.order):
            return self.report(
                call,
                "DataLoader without `pin_memory=True`: its `collate_fn` moves each batch to the GPU "
                "itself (pinning cannot take device tensors)",
                severity=Severity.INFO,
                data=data,
            )
        fix = None
        if call.args:
            fix = FixSpec("add `pin_memory=True`", append_argument(call, "pin_memory=True"))
        for read_rarely, how in _RARE_READS:
            if read_rarely(model, site):
                return self.report(
                    call,
                    f"DataLoader without `pin_memory=True` while its batches go to the GPU ({how})",
                    severity=Severity.INFO,
                    fix=fix,
                    data=data,
                )
        if tensors_of_unknown_place(model, site):
            return self.report(
                call,
                "DataLoader without `pin_memory=True` while its batches go to the GPU (a TensorDataset "
                "of tensors made elsewhere: pinning fails if they already live on the GPU)",
                severity=Severity.INFO,
                data=data,
            )
        if read_for_a_person(model, site):
            return self.report(
                call,
                "DataLoader without `pin_memory=True` while its batches go to the GPU (each batch "
                "waits for a person: a key, a prompt or a plot window)",
                severity=Severity.INFO,
                fix=fix,
                data=data,
            )
        if collates_graphs(model, call, site.ctx, site.order):
            return self.report(
                call,
                "DataLoader without `pin_memory=True` while its batches go to the GPU (its batches "
                "are graph objects that pinning does not reach)",
                severity=Severity.INFO,
                fix=fix,
                data=data,
            )
        packed = unpinnable_batch_class(model, call, site.ctx, site.order)
        if packed is not None:
            return self.report(
                call,
                "DataLoader without `pin_memory=True` while its batches go to the GPU (its `collate_fn` "
                "packs them into `{batch_class}`, which has no `pin_memory()` method: pinning would "
                "pass them through as they are)",
                severity=Severity.INFO,
                data={**data, "batch_class": packed},
            )
        dataset = call_argument(call, "dataset", 0)
        if dataset is not None and (prepared_hf_table(model, dataset.value, site.ctx, site.order)
                                    or holds_token_windows(model, dataset.value, site.ctx, site.order)
                                    or holds_id_tensors(model, dataset.value, site.ctx, site.order)
                                    or tokenises_per_item(model, dataset.value, site.ctx, site.order)
                                    or tokenised_by_transform(model, dataset.value, site.ctx, site.order)):
            # Rows of token ids: a batch is a few kilobytes, and its copy costs next to nothing.
            return self.report(
                call,
                "DataLoader without `pin_memory=True` while its batches go to the GPU (batches of "
                "tokenised rows are small: each copy costs little)",
                severity=Severity.INFO,
                fix=fix,
                data=data,
            )
        return self.report(
            call,
            "DataLoader without `pin_memory=True` while its batches go to the GPU: each copy is "
            "staged through pageable memory and blocks the host",
            fix=fix,
            data=data,
        )
