"""GPU103 `host-copy-in-training-loop`: device-to-host copy (`.cpu()`, `.to("cpu")`, `.tolist()`) on every training step."""

from __future__ import annotations
from typing import Iterator, Optional
import libcst as cst
from advisor.findings import Severity
from advisor.model import CallSite, FileModel, Heat
from advisor.model.devices import names_host_device
from advisor.model.file_model import call_argument
from advisor.model.names import dotted_name
from advisor.model.guards import in_cpu_arm
from advisor.rules.sync import FORWARD_PATH_DOC
from advisor.rules.base import Report, Rule, snippet
from advisor.model.tensors import is_host_tensor, is_raw_batch
from advisor.model.timing import read_just_before
from advisor.model.vocabulary import BATCH_TEXT


def _is_module_value(model: FileModel, expr: cst.BaseExpression) -> bool:
    """`transformer.eval().cpu()`, `m.cpu()` where `m.parameters()` is used: moving a model."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        if expr.func.attr.value in ("eval", "train"):
            return True
        expr = expr.func.value
    name = dotted_name(expr)
    return name is not None and name in model.module_names()


_HOST_DEVICES = frozenset({'"cpu"', "'cpu'"})


def _moves_to_host(model: FileModel, site: CallSite) -> bool:
    if site.method == "cpu":
        return True
    if site.method != "to":
        return False
    target = call_argument(site.node, "device", 0)
    if target is None:
        return False
    value = target.value
    if type(value) is cst.Call and model.imports.qualify(value.func) == "torch.device" and value.args:
        value = value.args[0].value
    if type(value) is cst.SimpleString:
        return value.value in _HOST_DEVICES
    # `out.to(loss_device)` after `loss_device = torch.device("cpu")`: a copy to the host too
    return names_host_device(model, value, site.ctx, site.order)


def _chain_has_host_copy(model: FileModel, expr: Optional[cst.BaseExpression]) -> bool:
    while type(expr) in (cst.Call, cst.Attribute, cst.Subscript):
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
            if expr.func.attr.value in ("cpu", "numpy", "tolist", "item"):
                return True
            if expr.func.attr.value == "to" and expr.args:
                first = expr.args[0].value
                if type(first) is cst.SimpleString and first.value in _HOST_DEVICES:
                    return True
        expr = expr.func if type(expr) is cst.Call else expr.value
    return False


def _non_blocking(call: cst.Call) -> bool:
    """`.to("cpu", non_blocking=True)`: the copy is queued, the host goes on."""
    return any(
        a.keyword is not None and a.keyword.value == "non_blocking" and type(a.value) is cst.Name and a.value.value == "True"
        for a in call.args
    )


class HostCopyInTrainingLoop(Rule):
    code = "GPU103"
    name = "host-copy-in-training-loop"
    summary = "device-to-host copy (`.cpu()`, `.to(\"cpu\")`, `.tolist()`) on every training step"
    what = """
        `.cpu()`, `.to("cpu")` and `.tolist()` on tensors inside the innermost training loop,
        also as the start of a chain such as `out.detach().cpu().numpy()`, reported once. A
        `.numpy()` with no `.cpu()` on the way is left alone: it raises for a CUDA tensor, so code
        that runs calls it on tensors already in host memory. Tensors already in host memory
        (a view that copies nothing) and modules, including pretrained models and pipelines of the Hugging Face
        libraries (`pipe.to("cpu")` offloads weights), are left alone, and so is a copy in the arm
        of a conditional expression taken off the GPU (`x.cuda() if mask.is_cuda else x.cpu()`:
        the data is in host memory already). A copy under a switch
        named for keeping data in host memory (`if self.cpu_cache:`, `if offload:`) is
        information: the user chose that saving. So is a copy queued with `non_blocking=True`
        (`.to("cpu", non_blocking=True)`): the host goes on, and must synchronise before it reads
        the values. So is a copy of a value (or a view or cast of it, `loss.view(-1).cpu()`)
        that an `.item()` or another copy read back just before, with only bookkeeping between:
        that read waited already.
    """ + FORWARD_PATH_DOC
    why = """
        A copy from the GPU to ordinary host memory is synchronous: the host waits until the
        kernels producing the tensor have run and the bytes have arrived. Done every step (to
        collect predictions or compute a metric with NumPy) it stalls the pipeline that keeps
        the GPU fed, and the transfer itself crosses the slow host link.
    """
    example = """
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
            all_preds.extend(out.argmax(1).cpu().tolist())
    """
    instead = """
        preds = []
        for x, y in loader:
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
            preds.append(out.argmax(1).detach())  # stays on the GPU
        all_preds = torch.cat(preds).cpu().tolist()  # one copy per epoch
    """
    hint = "keep results on the device (append, then `torch.cat`) and copy them once per epoch"
    fix_safety = """
        No automatic fix. Keeping the results on the device means changing the code that consumes
        them (NumPy metrics, lists of Python numbers), which no local rewrite can do. A
        `non_blocking=True` on a device-to-host copy is never a fix: without a synchronisation the
        host may read the buffer before the copy has landed.
    """
    references = (
        (
            "Performance Tuning Guide: avoid unnecessary CPU-GPU synchronization",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization",
        ),
        (
            "A guide on good usage of non_blocking and pin_memory()",
            "https://docs.pytorch.org/tutorials/intermediate/pinmem_nonblock.html",
        ),
        ("torch.Tensor.cpu", "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.cpu.html"),
    )
    requires = ((".cpu(", ".numpy(", ".tolist(", "cpu"), BATCH_TEXT)

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.method_calls("cpu", "to", "numpy", "tolist"):
            if site.method in ("cpu", "to") and not _moves_to_host(model, site):
                continue
            heat = model.batch_heat(site.ctx)
            if heat is None or _chain_has_host_copy(model, site.receiver) or model.in_assert_message(site.node):
                continue
            if is_raw_batch(model, site.receiver, site.ctx, site.order) or in_cpu_arm(model, site.node):
                continue
            if is_host_tensor(model, site.receiver, site.ctx, site.order):
                continue  # already in host memory (`torch.empty(n, pin_memory=True).numpy()`): no copy
            if site.method == "tolist" and not model.is_tensor(site.receiver, site.ctx):
                continue
            if site.method == "numpy":
                # `x.numpy()` with no `.cpu()` on the way raises for a CUDA tensor: code that runs
                # calls it on tensors already in host memory (`.cpu().numpy()` is reported at its
                # `.cpu()`).
                continue
            kinds = model.kinds(site.receiver, site.ctx, site.order)
            if "module" in kinds or "ddp" in kinds or _is_module_value(model, site.receiver):
                continue
            if model.guards.offloading(site.ctx):
                heat = Heat.GATED  # `if self.cpu_cache: feat = feat.cpu()`: a saving the user chose
            if _non_blocking(site.node):
                yield self.report(
                    site.node,
                    "`.{method}(..., non_blocking=True)` copies `{receiver}` to the host without "
                    "waiting: nothing stalls here, but the values may be read only after a synchronisation",
                    severity=Severity.INFO,
                    data={"method": site.method, "receiver": snippet(model, site.receiver, 30)},
                )
                continue
            earlier = _read_just_before(model, site)
            if earlier is not None:
                # `total = correct.item()`, then `stats = correct.cpu()`: the first read waited,
                # and the value has not changed since.
                yield self.report(
                    site.node,
                    "`.{method}()` copies `{receiver}` to the host right after `{first_read}` read it "
                    "back, which already waits for the GPU on every training step",
                    severity=Severity.INFO,
                    data={"method": site.method, "receiver": snippet(model, site.receiver, 30),
                          "first_read": snippet(model, earlier.node, 30)},
                )
                continue
            yield self.report(
                site.node,
                "`.{method}()` copies `{receiver}` to the host and waits "
                "for the GPU on every training step",
                severity=self.severity_for(heat),
                data={"method": site.method, "receiver": snippet(model, site.receiver, 30)},
            )


def _read_just_before(model: FileModel, site):
    """An `.item()` (or `.cpu()`, `.tolist()`) of the same value that runs just before this copy
    with only bookkeeping between (`model/timing.py`), if any."""
    reads = model.shared("gpu103-reads", lambda m: {id(s.node): s for s in m.method_calls("item", "cpu", "tolist")
                                                     if s.receiver is not None})
    value = _same_values(model, site.receiver)
    return read_just_before(model, site, reads, lambda other: _same_values(model, other.receiver) == value)


# Views and casts of one value: `loss.view(-1)` holds what `loss` holds.
_VIEWS = frozenset({"view", "reshape", "detach", "flatten", "squeeze", "unsqueeze", "float", "double", "contiguous"})


def _same_values(model: FileModel, expr: cst.BaseExpression) -> str:
    """The code of the value a receiver reads, past views and casts of it and `.data`."""
    while True:
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _VIEWS:
            expr = expr.func.value
        elif type(expr) is cst.Attribute and expr.attr.value == "data":
            expr = expr.value
        else:
            return model.code(expr).strip()
