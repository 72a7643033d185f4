"""GPU102 `tensor-printed-in-training-loop`: printing, logging or formatting a tensor on every training step."""

from __future__ import annotations
import re
from typing import Iterator
import libcst as cst
from advisor.model import CallSite, FileModel, Heat
from advisor.model.tensors import is_host_tensor
from advisor.rules.sync import FORWARD_PATH_DOC
from advisor.rules.base import Report, Rule, snippet
from advisor.model.vocabulary import BATCH_TEXT


_LOGGER_NAME = re.compile(r"(^|_)(log|logger|logging|LOGGER|LOG)$")


def _debug_level_named(model: FileModel) -> bool:
    """The file names the debug level (`logging.DEBUG`, `level="DEBUG"`): it may turn debug
    records on."""
    return "DEBUG" in (getattr(model, "text", None) or "")


_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


# What a `.log({...})` call hands to experiment trackers that convert each value to a number.
_TRACKERS = frozenset({"wandb.init", "accelerate.Accelerator", "accelerate.accelerator.Accelerator"})

class TensorFormattedInTrainingLoop(Rule):
    code = "GPU102"
    name = "tensor-printed-in-training-loop"
    summary = "printing, logging or formatting a tensor on every training step"
    what = """
        A tensor passed to `print`, to a `logging` call, to an f-string or `%`/`.format`
        formatting, to `str()`, or to a progress bar or metrics writer (`set_postfix`,
        `add_scalar`, `wandb.log`, `accelerator.log` of an `Accelerator`) inside the innermost
        training loop. Values that are already Python numbers are left alone (the `.item()` that made them is GPU101's finding), and so is the message of an `assert` or of the exception a `raise` builds: it is formatted only on the failing step. A tensor handed as an argument to `logger.debug("loss %.4f", loss)` is information in a file that never names the debug level: the record is formatted only when debug records are on, which training runs seldom ask for (an f-string in the call is formatted whatever the level).
    """ + FORWARD_PATH_DOC
    why = """
        Rendering a tensor as text needs its values on the host: `print(loss)` and
        `f"{loss:.4f}"` copy the tensor back and wait for every queued kernel, exactly like
        `.item()`. It is easy to miss because nothing in the line looks like a copy.
    """
    example = """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            print(f"step {step}: loss {loss:.4f}")
    """
    instead = """
        for step, (x, y) in enumerate(loader):
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            if step % 100 == 0:
                print(f"step {step}: loss {loss.item():.4f}")
    """
    hint = "log every N steps, or keep a device-side running value and print it once per epoch"
    fix_safety = """
        No automatic fix. Logging less often, or logging a value read once per epoch, changes
        what the log shows; that trade is the author's to make.
    """
    references = (
        (
            "Performance Tuning Guide: avoid unnecessary CPU-GPU synchronization",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#avoid-unnecessary-cpu-gpu-synchronization",
        ),
        (
            "torch/_tensor.py: `Tensor.__format__` reads a 0-dim tensor with `.item()`",
            "https://github.com/pytorch/pytorch/blob/main/torch/_tensor.py",
        ),
        (
            "torch.cuda.set_sync_debug_mode",
            "https://docs.pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html",
        ),
    )
    requires = (
        ("print(", "log", "format", 'f"', "f'", "%", "str(", "set_postfix", "add_scalar", "set_description"),
        BATCH_TEXT,
    )

    def _tensor_args(self, model: FileModel, site: CallSite) -> Iterator[cst.BaseExpression]:
        for arg in site.node.args:
            value = arg.value
            if type(value) is cst.Dict:
                yield from self._tensor_values(model, value, site)
            elif arg.star:
                continue
            elif _device_tensor(model, value, site.ctx):
                yield value
            elif type(value) is cst.Name:
                # `metrics = {"loss": loss}; print(metrics)`: report the dict at the call.
                found = model.assignments(value.value, site.ctx)
                if len(found) == 1 and type(found[0].value) is cst.Dict:
                    if any(True for _ in self._tensor_values(model, found[0].value, site)):
                        yield value

    def _tensor_values(self, model: FileModel, value: cst.Dict, site: CallSite) -> Iterator[cst.BaseExpression]:
        for element in value.elements:
            if type(element) is cst.DictElement and _device_tensor(model, element.value, site.ctx):
                yield element.value

    def _sinks(self, model: FileModel) -> Iterator[CallSite]:
        facts = model.facts
        for name in ("print", "str", "repr"):
            yield from facts.calls_by_callee.get(name, ())
        for method in _LOG_METHODS:
            for site in facts.calls_by_method.get(method, ()):
                qual = site.qualname or ""
                receiver = (site.receiver_name or "").rsplit(".", 1)[-1]
                if qual.startswith("logging.") or _LOGGER_NAME.search(receiver):
                    yield site
        for method in ("set_postfix", "set_description", "set_postfix_str", "add_scalar", "add_scalars"):
            yield from facts.calls_by_method.get(method, ())
        for site in facts.calls_by_method.get("format", ()):
            if type(site.receiver) in (cst.SimpleString, cst.ConcatenatedString):
                yield site
        yield from model.calls_to("wandb.log", "mlflow.log_metric", "mlflow.log_metrics")
        for site in facts.calls_by_method.get("log", ()):
            # run = wandb.init(...); run.log({...}); accelerator = Accelerator(log_with="wandb");
            # accelerator.log({...}): its trackers read every value back as a number
            if site.receiver_name and any(
                type(a.value) is cst.Call and model.imports.qualify(a.value.func) in _TRACKERS
                for a in model.assignments(site.receiver_name, site.ctx)
            ):
                yield site

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in self._sinks(model):
            heat = model.batch_heat(site.ctx)
            if heat is None or model.in_assert_message(site.node):
                continue  # `assert ok, print(x)`: the print runs only when the assert fails
            lazy = ({id(a.value) for a in site.node.args[1:]}
                    if site.method == "debug" and not _debug_level_named(model) else set())
            for value in self._tensor_args(model, site):
                # `logger.debug("loss %.4f", loss)`: formatted only when debug records are on,
                # which a training run seldom turns on.
                yield self._report(model, value, Heat.GATED if id(value) in lazy else heat)
        for formatted in model.facts.formatted:
            if model.in_assert_message(formatted.expr):
                continue  # an assert's message is formatted only when the assert fails
            heat = model.batch_heat(formatted.ctx)
            if heat is not None and _device_tensor(model, formatted.expr, formatted.ctx):
                yield self._report(model, formatted.expr, heat)

    def _report(self, model: FileModel, value: cst.BaseExpression, heat: Heat) -> Report:
        return self.report(
            value,
            "formatting tensor `{expression}` copies it to the host and waits for the GPU "
            "on every training step",
            severity=self.severity_for(heat),
            data={"expression": snippet(model, value)},
        )


def _device_tensor(model: FileModel, value: cst.BaseExpression, ctx) -> bool:
    """A tensor not known to be in host memory: formatting `loss.detach().cpu()` reads what the
    copy brought over (the copy is GPU103's)."""
    return model.is_tensor(value, ctx) and not is_host_tensor(model, value, ctx)
