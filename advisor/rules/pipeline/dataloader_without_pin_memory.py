"""GPU201 `dataloader-without-pin-memory`: DataLoader without `pin_memory=True` feeding a CUDA model."""

from __future__ import annotations
from typing import Iterator, Optional
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import DATALOADER
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.rules.call_layout import append_argument
from advisor.rules.pipeline.loader_flow import dataset_on_device, batches_go_to_device
from advisor.rules.pipeline.loader_literals import loader_options
from advisor.model.containers import kwargs_value


class DataLoaderWithoutPinnedMemory(Rule):
    code = "GPU201"
    name = "dataloader-without-pin-memory"
    summary = "DataLoader without `pin_memory=True` feeding a CUDA model"
    what = """
        A `DataLoader(...)` with no `pin_memory=True` in a file that copies its batches to a
        CUDA device. A `pin_memory` given as a variable or expression is trusted; a `**kwargs`
        dict defined in the file is looked into; one that cannot be resolved lowers the
        finding to info.
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
        analysis cannot read, or when the call has no argument to follow.
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
    requires = (("DataLoader",), ("cuda",))

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.calls_to(DATALOADER):
            if not batches_go_to_device(model, site):
                continue
            report = self._check_call(model, site)
            if report is not None:
                yield report

    def _check_call(self, model: FileModel, site: CallSite) -> Optional[Report]:
        call = site.node
        if dataset_on_device(model, site):
            return None
        arg = call_argument(call, "pin_memory", 7)
        if arg is not None:
            if literal_bool(arg.value) is False:
                return self.report(
                    call,
                    "DataLoader sets `pin_memory=False` while its batches go to the GPU: each copy "
                    "is staged through pageable memory and blocks the host",
                    fix=FixSpec(
                        "set `pin_memory=True`",
                        (NodeEdit(arg.value, "True"),),
                        Applicability.UNSAFE,  # the author chose False explicitly
                    ),
                    data={"loader_options": loader_options(call)},
                )
            return None
        if any(a.star == "*" for a in call.args):
            return self.report(call, "cannot tell whether this DataLoader pins memory", severity=Severity.INFO,
                               data={"loader_options": loader_options(call)})
        state, value = kwargs_value(model, site, "pin_memory")
        if state == "present":
            return None
        if state == "unknown":
            return self.report(
                call,
                "DataLoader options come from `**kwargs` that may not set `pin_memory=True`; "
                "its batches go to the GPU",
                severity=Severity.INFO,
                data={"loader_options": loader_options(call)},
            )
        fix = None
        if call.args:
            fix = FixSpec("add `pin_memory=True`", append_argument(call, "pin_memory=True"))
        return self.report(
            call,
            "DataLoader without `pin_memory=True` while its batches go to the GPU: each copy is "
            "staged through pageable memory and blocks the host",
            fix=fix,
            data={"loader_options": loader_options(call)},
        )
