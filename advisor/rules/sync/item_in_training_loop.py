"""GPU101 `item-in-training-loop`: `.item()` or `float(tensor)` on every training step."""

from __future__ import annotations
from typing import Dict, Iterator, Tuple
from advisor.model import FileModel
from advisor.model.engine_runs import engine_runs
from advisor.model.legacy_autograd import old_scalar_read, scalar
from advisor.rules.base import Report, Rule, snippet
from advisor.findings import Severity
from advisor.model.tensors import is_host_tensor, is_numpy, is_raw_batch, type_fallback
from advisor.model.timing import read_just_before, waited_just_before
from advisor.model.vocabulary import BATCH_TEXT
from advisor.model.containers import Value, list_elements
import libcst as cst


_MATH_TESTS = ("math.isnan", "math.isinf", "math.isfinite")
_ELEMENT_COMPARERS = ("max", "min", "sorted")


class ItemInTrainingLoop(Rule):
    code = "GPU101"
    name = "item-in-training-loop"
    summary = "`.item()` or `float(tensor)` on every training step"
    what = """
        Calls to `.item()` (and its PyTorch 0.3 spelling, `loss.data[0]` of a loss or a full
        reduction: code that reads one so runs on torch 0.4 or older, where that is a copy to
        the host, and from 0.5 on raises; `output.data[0]`, a row of a batch, is no number), and `float()`, `int()`, `bool()` or `math.isnan()` / `isinf()` /
        `isfinite()` (which call `float()` first) applied to a tensor, or `range()` given one
        (`range(num_images + 1)` converts it with `__index__`), or Python's `max()`, `min()` or
        `sorted()` given one (`range(max(lengths))`: each comparison of two elements is read
        back; not a batch part the loader handed over, still in host memory), or `torch.tensor()` /
        `torch.Tensor()` given a list that holds tensors not known to be in host memory
        (`torch.Tensor([losses])` reads each one back; `torch.stack` would not), inside the
        innermost training loop (the loop that runs `backward()` or `optimizer.step()`, directly
        or through a function it calls), or in the forward path of a model the call graph does
        not see trained (built from a registry or a config name, handed to a `Trainer`): the
        `forward` of an `nn.Module` or Hugging Face model class and the project functions it
        calls, with gradients on and outside `if not self.training:` (and outside the arms it
        takes only when handed no targets, `if target is None:` beside an `if target is not
        None:` that computes the loss). That is a warning when the
        forward evidently trains (its class holds parameters and is put in a registry, `@MODEL_REGISTRY.register()` or a module-level dict of models,
        or the forward takes `labels`/`targets`, also qualified as `targets_batch`, or computes a loss) and informational for a
        plain layer. Under a periodic condition such as
        `if step % 100 == 0` (not `% args.log_interval` whose option, added in the project,
        defaults to 1 and no documented command changes: that holds every step; a module-level
        `log_interval = 1` counts as such a gate where the script then runs a configurator's
        code, `exec(open('configurator.py').read())`, that rebinds it from a config file) (or a Hugging Face Trainer's `if self.control.should_log:`, which
        its callbacks set every `logging_steps`), a test of the step counter for equality (`if step
        != capture_step: return` at the top of a hook) or of the steps or time since the last
        run (`if step - last_step < interval: return`) the finding is only informational (a
        rank-0 check alone is not such a condition: on one GPU it holds every step, and on
        several the other ranks wait for rank 0 at the next collective), and so it is in a
        probe run once beside the training (a learning-rate finder whose loop breaks out once
        its `enumerate` counter reaches at most 200, in a file whose training loop runs on, or
        any loop of a function or class named as a finder, `LRFinder.range_test`, `find_lr`; a
        benchmark whose every loop stops early measures those steps and keeps its warnings), and so it is
        for an `.item()` under `if isinstance(v, torch.Tensor):` (or `if type(v) == torch.Tensor:`) on a value not known to be a
        tensor (a metric logger converting whatever its callers hand it). An Ignite
        `create_supervised_trainer(..., device=<cuda>)` run in the file and given no
        `output_transform` is reported at its call: ignite's default one returns `loss.item()`
        on every iteration. A loop trains when a scaler object is called with the loss and the
        optimizer (`loss_scaler(loss, optimizer, ...)`, timm's `NativeScaler`). Values built on
        the host on every path (`torch.tensor(sizes).cumsum(0)`, numbers) are not reported.
        An `.item()` (or `float(loss)`) after a `torch.cuda.synchronize()` that times the step
        (one GPU105 accepts as a measurement), or after a project helper that synchronizes and
        reads the clock (`t = record_time()`), with only meter updates, clock reads and logging
        calls between (a rank-0 logging block a few lines further counts, and what the read's
        own expression computes must be bookkeeping or a small kernel on values already
        computed, `out["lm_loss"].mean().item()`), is information: the queue is already
        empty, so the read adds no wait of its own. A read after a synchronize GPU105 reports
        keeps its warning: that synchronize is to go, and the read then waits in its place. A
        read that runs only in a run of one process (`if not args.distributed:`, the `else` of a
        launch test) is information too when every command line the project documents for the script
        starts several (`--nproc_per_node=8`, `./distributed_train.sh 8 ...`,
        `--multiprocessing-distributed`). A method that steps the optimizer once per call after
        a loop over micro-batches is a training step: what it reads after that loop counts per
        step. A value read back again right after it was read, with only bookkeeping between
        (`total += loss.item()`, then a `print` that reads `loss.item()` again, or
        `D_x = out.mean().item()` twice, or the arm of `if loss.item() < best:` reading it
        again, in a statement
        that runs whenever the later one does; or twice in one statement) waits once: the first
        read carries the warning and counts the re-reads, which are information. Reads of other
        values keep their own warnings, next to each other or not: each waits once the others
        are gone.
    """
    why = """
        Turning a CUDA tensor into a Python number copies it to the host, and the copy can only
        happen once every kernel queued before it has finished. The CPU stops queueing work
        while it waits, so the GPU then idles until the CPU catches up. Once per step, this
        removes the overlap between host and device that keeps the GPU busy.
    """
    example = """
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
    """
    instead = """
        running_loss = torch.zeros((), device="cuda")
        for x, y in loader:
            loss = criterion(model(x.cuda()), y.cuda())
            loss.backward()
            optimizer.step()
            running_loss += loss.detach()
        print(running_loss.item() / len(loader))  # one sync per epoch
    """
    hint = "keep the value on the device (`total += loss.detach()`) and read it once per epoch or every N steps"
    fix_safety = """
        No automatic fix. Where the value should go instead (a device-side running total, a
        read every N steps, or nowhere) depends on what the script does with the number, and
        any rewrite would change when and how often it is logged.
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
        ("torch.Tensor.item", "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.item.html"),
        (
            "torch.cuda.set_sync_debug_mode",
            "https://docs.pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html",
        ),
    )
    # An Ignite trainer's `.item()` is in ignite's default `output_transform`: its call stands for it.
    requires = (
        (".item(", "float(", "int(", "bool(", "isnan(", "isinf(", "isfinite(", "range(", "create_supervised_trainer",
         "tensor(", "Tensor(", "as_tensor(", "max(", "min(", "sorted(", ".data[0]"),
        BATCH_TEXT + ("create_supervised_trainer",),
    )

    def check(self, model: FileModel) -> Iterator[Report]:
        yield from _one_wait_each(model, self._reads(model))
        yield from self._tensors_from_tensor_lists(model)
        yield from self._engine_trainers(model)

    def _reads(self, model: FileModel) -> Iterator[Tuple[object, Report]]:
        """Each read with its call site: `.item()`, then `float()`-like conversions and `range()`."""
        for site in model.method_calls("item"):
            if site.node.args:
                continue
            heat = model.batch_heat(site.ctx)
            if heat is None or is_numpy(model, site.receiver, site.ctx, site.order) or is_raw_batch(model, site.receiver, site.ctx, site.order):
                continue
            if is_host_tensor(model, site.receiver, site.ctx, site.order) or model.in_assert_message(site.node):
                continue  # in host memory already; or in an assert's message, read only when it fails
            fallback = type_fallback(model, site.receiver, site.ctx) and not model.is_tensor(site.receiver, site.ctx, site.order)
            if waited_just_before(model, site):
                # A synchronize for the step timer emptied the queue a few lines up.
                yield site, self.report(
                    site.node,
                    "`{expression}` reads a value back on every training step, after a "
                    "`torch.cuda.synchronize()` that already waited for the GPU",
                    severity=Severity.INFO,
                    data={"expression": snippet(model, site.node)},
                )
                continue
            yield site, self.report(
                site.node,
                "`{expression}` waits for the GPU on every training step",
                severity=Severity.INFO if fallback else self.severity_for(heat),
                data={"expression": snippet(model, site.node)},
            )
        conversions = [(b, model.facts.calls_by_callee.get(b, ())) for b in ("float", "int", "bool")]
        # `math.isnan(loss)` converts its argument with `float()` first.
        conversions += [(q, model.calls_to(q)) for q in _MATH_TESTS]
        for builtin, sites in conversions:
            for site in sites:
                args = site.node.args
                if len(args) != 1 or args[0].keyword is not None or args[0].star:
                    continue
                heat = model.batch_heat(site.ctx)
                if heat is None or not model.is_tensor(args[0].value, site.ctx):
                    continue
                if is_host_tensor(model, args[0].value, site.ctx, site.order) or model.in_assert_message(site.node):
                    continue
                yield site, self._conversion(model, site, heat, builtin)

        # `max(lengths)` of a tensor: Python compares its elements one by one, each comparison
        # read back (`sum` and `list` keep the elements on the device).
        for builtin in _ELEMENT_COMPARERS:
            for site in model.facts.calls_by_callee.get(builtin, ()):
                args = site.node.args
                if len(args) != 1 or args[0].keyword is not None or args[0].star:
                    continue
                if model.imports.qualify(site.node.func) not in (None, builtin, "builtins." + builtin):
                    continue
                heat = model.batch_heat(site.ctx)
                value = args[0].value
                if heat is None or not model.is_tensor(value, site.ctx, site.order):
                    continue
                if (is_host_tensor(model, value, site.ctx, site.order) or is_raw_batch(model, value, site.ctx, site.order)
                        or model.in_assert_message(site.node)):
                    continue  # `max(num[:, 1])` of a batch the loader handed over, still in host memory
                yield site, self.report(
                    site.node,
                    "`{expression}` compares the tensor's elements one by one in Python, reading each "
                    "back and waiting for the GPU on every training step",
                    severity=self.severity_for(heat),
                    data={"expression": snippet(model, site.node), "builtin": builtin},
                )

        # PyTorch 0.3's `loss.data[0]`, its `.item()`.
        for subscript, ctx in model.facts.subscripts:
            receiver = old_scalar_read(model, subscript)
            if receiver is None:
                continue
            heat = model.batch_heat(ctx)
            if heat is None or not model.is_tensor(receiver, ctx) or is_host_tensor(model, receiver, ctx):
                continue
            if not scalar(model, receiver, ctx, model.order_of(subscript)):
                continue  # `output.data[0]`: the first row of a batch
            yield None, self.report(
                subscript,
                "`{expression}` reads a value back on every training step (the `.item()` of PyTorch 0.4 and older), "
                "waiting for the GPU",
                severity=self.severity_for(heat),
                data={"expression": snippet(model, subscript)},
            )

        # `range(num_images + 1)` with a tensor count: `range` converts it with `__index__`.
        for site in model.facts.calls_by_callee.get("range", ()):
            if model.imports.qualify(site.node.func) is not None:
                continue
            bounds = [a.value for a in site.node.args if a.keyword is None and not a.star]
            if not bounds or len(bounds) != len(site.node.args):
                continue
            heat = model.batch_heat(site.ctx)
            if heat is None:
                continue
            if not any(model.is_tensor(b, site.ctx) and not is_host_tensor(model, b, site.ctx, site.order) for b in bounds):
                continue
            yield site, self._conversion(model, site, heat, "range")

    def _conversion(self, model: FileModel, site, heat, builtin: str) -> Report:
        if waited_just_before(model, site):
            return self.report(
                site.node,
                "`{expression}` converts a tensor to a Python value on every training step, after a "
                "`torch.cuda.synchronize()` that already waited for the GPU",
                severity=Severity.INFO,
                data={"expression": snippet(model, site.node), "builtin": builtin},
            )
        return self.report(
            site.node,
            "`{expression}` converts a tensor to a Python value, waiting for the GPU on every training step",
            severity=self.severity_for(heat),
            data={"expression": snippet(model, site.node), "builtin": builtin},
        )

    def _tensors_from_tensor_lists(self, model: FileModel) -> Iterator[Report]:
        """`torch.Tensor([losses])`, `torch.tensor(parts)` where the list holds tensors not known
        to be in host memory: each element is read back as a Python number, one wait per element
        (and the result leaves autograd). `torch.stack` keeps them on the device."""
        for site in model.calls_to(*_TENSOR_FROM_DATA):
            args = site.node.args
            if not args or args[0].keyword is not None or args[0].star:
                continue
            heat = model.batch_heat(site.ctx)
            if heat is None:
                continue
            elements = _listed(model, args[0].value, site.ctx, site.order, 0)
            if not elements or not any(
                v.flow is model.values and model.is_tensor(v.expr, v.ctx, v.order)
                and not is_host_tensor(model, v.expr, v.ctx, v.order)
                for v in elements
            ):
                continue
            yield self.report(
                site.node,
                "`{expression}` converts each tensor of the list to a Python value, waiting for "
                "the GPU on every training step",
                severity=self.severity_for(heat),
                data={"expression": snippet(model, site.node), "builtin": "tensor"},
            )

    def _engine_trainers(self, model: FileModel) -> Iterator[Report]:
        """An Ignite `create_supervised_trainer(..., device=<cuda>)` of this file, run here, left
        with the default `output_transform`: ignite calls `loss.item()` on every iteration."""
        seen = set()
        for run in engine_runs(model):
            build = run.build
            if build.model is not model or id(build.call) in seen:
                continue
            if not build.item_every_iteration() or not build.copies_to_cuda():
                continue
            seen.add(id(build.call))
            yield self.report(
                build.call,
                "Ignite trainer keeps its default `output_transform`, which calls `loss.item()` "
                "and waits for the GPU on every iteration",
                related=[(run.site.node, "engine run")],
                hint=(
                    "pass `output_transform=lambda x, y, y_pred, loss: loss.detach()` and read the "
                    "number only where it is logged"
                ),
            )


# Constructors that copy Python data (numbers, or tensors read back one by one) into a tensor.
_TENSOR_FROM_DATA = ("torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.as_tensor")


def _one_wait_each(model: FileModel, reads: Iterator[Tuple[object, Report]]) -> Iterator[Report]:
    """A value read back again right after an earlier read of it, with only bookkeeping between
    (`total += loss.item()`, then a `print` that reads `loss.item()` again; twice in one
    statement): the first read waited, and the value has not changed since. The first carries
    the warning and counts the re-reads, which are information. Reads of other values, even
    next to each other, each keep their warning: each is a wait of its own once the others go."""
    reads = list(reads)
    # An old `loss.data[0]` read (no call site) waits on its own.
    warned = sorted(((site, report) for site, report in reads
                     if site is not None and report.severity is not Severity.INFO),
                    key=lambda entry: entry[0].order)
    seen: Dict[int, object] = {}  # call-node id -> site, of the warned reads so far
    leader_of: Dict[int, Report] = {}  # call-node id -> the read that waited for it
    value_of: Dict[int, str] = {}  # call-node id -> the code of the value it reads
    by_statement: Dict[tuple, Report] = {}
    followers: Dict[int, list] = {}
    for site, report in warned:
        value = model.code(_value_read(site)).strip()
        first = by_statement.get((site.stmt, value))
        if first is None:
            earlier = read_just_before(model, site, seen, lambda other: value_of.get(id(other.node)) == value)
            if earlier is not None:
                first = leader_of.get(id(earlier.node))
        if first is None:
            first = report
        else:
            followers.setdefault(id(first), []).append(report)
        by_statement.setdefault((site.stmt, value), first)
        leader_of[id(site.node)] = first
        value_of[id(site.node)] = value
        seen[id(site.node)] = site
    for site, report in warned:
        after = followers.get(id(report))
        if not after:
            continue
        report.data["more_reads"] = len(after)
        report.data["more_values"] = "once more" if len(after) == 1 else f"{len(after)} more times"
        report.template += "; the same value is read back {more_values} right after it"
        for follower in after:
            follower.severity = Severity.INFO
            follower.data["first_read"] = report.data["expression"]
            follower.template = (
                "`{expression}` reads back again what `{first_read}` just read, which already "
                "waits for the GPU on every training step"
            )
    for _, report in reads:
        yield report


def _value_read(site) -> cst.BaseExpression:
    """What a read converts: the receiver of `.item()`, the argument of `float(x)`."""
    if site.method == "item" and site.receiver is not None:
        return site.receiver
    args = site.node.args
    return args[0].value if len(args) == 1 else site.node


def _listed(model: FileModel, expr, ctx, order, depth: int):
    """The values a list literal (nested ones included) or a list built in steps may hold; None
    when not known."""
    if depth > 3:
        return None
    if type(expr) in (cst.List, cst.Tuple):
        out = []
        for element in expr.elements:
            if type(element) is cst.StarredElement:
                return None
            inner = _listed(model, element.value, ctx, order, depth + 1)
            out.extend(inner if inner is not None else [Value(element.value, ctx, order, model.values)])
        return out
    if type(expr) in (cst.ListComp, cst.GeneratorExp):
        # `[torch.norm(p.grad) for p in params]`: what each round puts in
        return [Value(expr.elt, ctx, order, model.values)]
    if type(expr) is cst.Name:
        return list(list_elements(model, expr.value, ctx, order) or ()) or None
    return None
