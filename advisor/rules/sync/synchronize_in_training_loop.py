"""GPU105 `synchronize-in-training-loop`: `torch.cuda.synchronize()` on every training step."""

from __future__ import annotations
import re
from typing import Iterator
import libcst as cst
from advisor.model import CallSite, FileModel
from advisor.model.timing import near_timing
from advisor.rules.base import Report, Rule
from advisor.model.vocabulary import TRAINING_TEXT


_SYNC_RECEIVER = re.compile(r"stream|event", re.IGNORECASE)


_SYNC_FUNCTIONS = ("torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.cuda.current_stream")


class SynchronizeInTrainingLoop(Rule):
    code = "GPU105"
    name = "synchronize-in-training-loop"
    summary = "`torch.cuda.synchronize()` on every training step"
    what = """
        `torch.cuda.synchronize()`, `torch.accelerator.synchronize()` and `Stream`/`Event`
        `.synchronize()` inside the innermost training loop. Calls next to timing code are left
        alone, since timing GPU work needs them: a `time.perf_counter()` call, `elapsed_time` or
        a CUDA event made with `enable_timing=True` (or the `.record()` of one kept in a name)
        within three statements before it or five after it (the end-of-step timer often follows
        a few meter updates; up to ten after it when no backward or optimizer step runs in
        between), a call there of a project function that reads the clock (`t0 =
        timer()`, `timer.toc()`), or a synchronize inside such a helper
        (`def time_synchronized(): torch.cuda.synchronize(); return time.time()`), or in the
        body of `with Timer(...):` where the project's `Timer` reads the clock as the block
        starts or ends. A synchronize that is all an `if` holds (`if device == "cuda":
        torch.cuda.synchronize()`) is measured from that `if`. A small helper that only
        synchronizes (`def sync(device): torch.cuda.synchronize(device)`) is timing code when
        each of its calls is (`sync(device)` then `profiler.tick("forward")`).
    """
    why = """
        An explicit synchronize blocks the host until every queued kernel has finished, so the
        GPU runs dry while the host prepares the next step. Outside of measurements it is
        usually left over from debugging. CUDA's sync-debug mode does not report it either.
    """
    example = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            torch.cuda.synchronize()
    """
    instead = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
    hint = "remove it, or keep it only around the code you time"
    fix_safety = """
        No automatic fix. A synchronize may guard code the analysis cannot see (a custom CUDA
        extension, a side stream, a host buffer reused by a later copy); removing it is safe only
        when it was left over from debugging.
    """
    references = (
        (
            "Performance Tuning Guide: avoid unnecessary CPU-GPU synchronization",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization",
        ),
        (
            "CUDA semantics: asynchronous execution",
            "https://docs.pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution",
        ),
        ("torch.cuda.synchronize", "https://docs.pytorch.org/docs/stable/generated/torch.cuda.synchronize.html"),
        (
            "c10/cuda/CUDAFunctions.cpp: `device_synchronize` issues no sync-debug warning",
            "https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAFunctions.cpp",
        ),
    )
    requires = (("synchronize",), TRAINING_TEXT)

    def _is_sync(self, model: FileModel, site: CallSite) -> bool:
        if site.qualname in ("torch.cuda.synchronize", "torch.accelerator.synchronize"):
            return True
        if site.method != "synchronize" or site.node.args:
            return False
        receiver = site.receiver
        if type(receiver) is cst.Call:
            return model.imports.qualify(receiver.func) in _SYNC_FUNCTIONS or (
                (model.imports.qualify(receiver.func) or "").startswith("torch.cuda.")
            )
        name = site.receiver_name or ""
        if _SYNC_RECEIVER.search(name.rsplit(".", 1)[-1]):
            return True
        # A name bound to torch.cuda.Event()/Stream()/current_stream(), whatever it is called.
        for assignment in model.assignments(name, site.ctx) if name else ():
            value = assignment.value
            if type(value) is cst.Call and (model.imports.qualify(value.func) or "").startswith("torch.cuda."):
                return True
        return False

    def check(self, model: FileModel) -> Iterator[Report]:
        sites = model.calls_to("torch.cuda.synchronize", "torch.accelerator.synchronize")
        sites += [s for s in model.method_calls("synchronize") if s.qualname is None]
        for site in sites:
            if not self._is_sync(model, site):
                continue
            heat = model.sync_heat(site.ctx)
            if heat is None or near_timing(model, site):
                continue
            yield self.report(
                site.node,
                "explicit synchronize blocks the host until the GPU is idle, on every training step",
                severity=self.severity_for(heat),
            )
