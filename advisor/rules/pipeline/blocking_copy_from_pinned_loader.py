"""GPU203 `blocking-copy-from-pinned-loader`: batch from a pinned DataLoader copied to the GPU without `non_blocking=True`."""

from __future__ import annotations
from typing import Dict, Iterator, Optional
import libcst as cst
from advisor.findings import Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.facts import bound_element
from advisor.model.datasets import token_id_batches
from advisor.model.guards import single_pass
from advisor.model.short_loops import short_probe
from advisor.model.file_model import call_argument
from advisor.model.names import dotted_name, root_name, variable_inner
from advisor.model.subtree import contains
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.model.devices import device_kind as _device_kind
from advisor.model.call_options import ABSENT, PRESENT
from advisor.model.cuda_tests import cuda_test
from advisor.model.engine_runs import TRAINER, engine_runs
from advisor.model.loaders import RAW_LOADERS, drawn_batches, loader_factory, loaders_drawn, loaders_iterated, owner_of
from advisor.model.read_back_loops import reads_back_each_pass
from advisor.model.value_flow import argument
from advisor.rules.pipeline.loader_flow import engine_moves_batches, evaluated_now_and_then, is_device_move, loader_option


def _pinned(model: FileModel, site: CallSite) -> bool:
    """Built with `pin_memory=True` on the GPU path: written in the call or a `**kwargs` dict of
    this file, or read from a constant, a settings object or an option's default; or built by a
    loader factory that pins by itself on CUDA (`idist.auto_dataloader`) and given no
    `pin_memory` (the batches are copied to CUDA wherever this is asked)."""
    model = owner_of(model, site) or model  # a loader another project file builds
    option = loader_option(model, site, "pin_memory", 7)
    factory = loader_factory(site)
    if factory is not None and factory.pins_on_cuda and option.state == ABSENT:
        return True
    return option.literals.only(True) or _pinned_in_one_setup(site) or _pinned_on_the_gpu(option)


def _pinned_on_the_gpu(option) -> bool:
    """`pin_memory=use_gpu`, `pin_memory=torch.cuda.is_available()`: true exactly on the CUDA
    run, the one whose copies this rule is about."""
    value = option.values[0] if option.state == PRESENT and len(option.values) == 1 else None
    return value is not None and cuda_test(value.flow.model, value.expr) is True


def _pinned_in_one_setup(site: CallSite) -> bool:
    """`pin_memory=True if cache_device == "cpu" else False`: pinned in the setup that keeps
    the data in host memory, the one where the batches are copied at all."""
    arg = call_argument(site.node, "pin_memory", 7)
    value = arg.value if arg is not None else None
    return type(value) is cst.IfExp and any(
        type(side) is cst.Name and side.value == "True" for side in (value.body, value.orelse)
    )


def _has_keyword(call: cst.Call, keyword: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword for a in call.args)


def _batch_part(model: FileModel, name: str, loop, site: CallSite, drawn: Dict[str, cst.Call]) -> bool:
    """``name`` holds, where ``site`` reads it, a loop variable of ``loop`` or a piece of one
    (`x, y = batch`, `batch["x"]`), or a comprehension variable over one (`for k, v in batch.items()`);
    or a value drawn in the loop with `next()` from a loader (``drawn``), or a piece of one."""
    found = model.assignments(name, site.ctx)
    if not found:
        return name in loop.batch_names or name in drawn  # bound by a comprehension over the batch
    # The bindings that reach the read (not the other arm of an `if`: `targets = targets.cuda()`
    # in each arm reads the loop's `targets`); `x = x.to(device)` reads the previous `x`, so
    # the statement that holds the call is skipped.
    reach = model.bindings.reaching(name, site.ctx, site.order)
    earlier = [a for a in reach.assignments if a.ctx.scope == site.ctx.scope
               and not (a.statement is not None and contains(a.statement, site.node))]
    if not earlier:
        return False
    return all(_bound_to_batch_part(a, loop, drawn) for a in earlier)


def _bound_to_batch_part(reaching, loop, drawn: Dict[str, cst.Call]) -> bool:
    if reaching.value is None:
        return reaching.ctx.loop is loop.ctx.loop and reaching.target in loop.targets
    value = reaching.value
    if any(value is call for call in drawn.values()):
        return True  # `x, y = next(it)`
    if (type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "next"
            and reaching.target in drawn and _same_iterator(value, drawn[reaching.target])):
        return True  # drawn again after `StopIteration`, from the same iterator rebuilt
    if reaching.index is not None and type(value) in (cst.Tuple, cst.List):
        if reaching.index >= len(value.elements):
            return False
        value = value.elements[reaching.index].value
    while type(value) in (cst.Attribute, cst.Subscript):
        value = value.value
    return type(value) is cst.Name and (value.value in loop.targets or value.value in drawn)


def _same_iterator(call: cst.Call, drawn: cst.Call) -> bool:
    """`next(u_iter)` in both places (the name rebuilt with `iter(loader)` in between)."""
    first = [dotted_name(c.args[0].value) if c.args else None for c in (call, drawn)]
    return first[0] is not None and first[0] == first[1]


def _first_arg(call: cst.Call) -> Optional[cst.BaseExpression]:
    arg = call_argument(call, "device", 0)
    return arg.value if arg is not None else None


# Views that keep a contiguous tensor contiguous, in the same (pinned) storage.
_CONTIGUOUS_VIEWS = frozenset({"unsqueeze", "squeeze", "view"})


def _views_stripped(expr: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """`y["imgs"][step]` for `y["imgs"][step].unsqueeze(0)`: a view of a batch's item is still
    in the batch's pinned memory, so its copy can run asynchronously as the whole batch's can."""
    while (type(expr) is cst.Call and type(expr.func) is cst.Attribute
           and expr.func.attr.value in _CONTIGUOUS_VIEWS):
        expr = expr.func.value
    return expr


def _plain_selection(expr: Optional[cst.BaseExpression]) -> bool:
    """A name, or items and attributes of it (`batch["x"]`, `batch.pixel_values`): no calls."""
    while type(expr) in (cst.Attribute, cst.Subscript):
        expr = expr.value
    return type(expr) is cst.Name


def _pinned_loop(model: FileModel, root: str, site: CallSite, pinned_loops: dict):
    """The loop whose batch ``root`` holds (or a piece of it) where ``site`` reads it, when every
    loader that loop can take batches from is pinned; else None."""
    loop, drawn = site.ctx.loop, {}
    while loop is not None:
        if root in loop.batch_names and type(loop.node) is cst.For:
            drawn = {}
            break
        drawn = drawn_batches(model, loop)
        if root in drawn:
            break
        loop = loop.parent
    if loop is None or not _batch_part(model, root, loop, site, drawn):
        return None
    # The batch's source: the loop's iterable, or the `next(...)` it was drawn with.
    source = drawn.get(root) or loop.node
    if id(source) not in pinned_loops:
        if root in drawn:
            found = loaders_drawn(model, source, RAW_LOADERS)
        else:
            found = loaders_iterated(model, loop, RAW_LOADERS)
        loaders, exhaustive = found
        pinned = exhaustive and bool(loaders) and all(_pinned(model, s) for s in loaders)
        pinned_loops[id(source)] = pinned
        # A loader of token ids: its batch is a few kilobytes, whose blocking copy is short.
        pinned_loops[("ids", id(source))] = pinned and all(
            token_id_batches(model, s.node, s.ctx, s.order) for s in loaders)
    if pinned_loops[id(source)]:
        pinned_loops[("ids-of-loop", id(loop))] = pinned_loops[("ids", id(source))]
        return loop
    return None


def _drawn_here(model: FileModel, site: CallSite, pinned_loops: dict):
    """The loop around ``site`` when the copy is of a batch drawn right there from pinned loaders
    (`next(self.dl).cuda()`, through `iter(...)` or a generator over them); else None."""
    receiver, loop = site.receiver, site.ctx.loop
    if type(receiver) is not cst.Call or loop is None:
        return None
    if model.values.drawn_from(receiver, site.ctx, site.order) is None:
        return None
    key = ("drawn", id(receiver))
    if key not in pinned_loops:
        loaders, exhaustive = loaders_drawn(model, receiver, RAW_LOADERS)
        pinned_loops[key] = exhaustive and bool(loaders) and all(_pinned(model, s) for s in loaders)
        pinned_loops[("ids-of-loop", id(loop))] = pinned_loops[key] and all(
            token_id_batches(model, s.node, s.ctx, s.order) for s in loaders)
    return loop if pinned_loops[key] else None


def _pinned_through_callers(model: FileModel, root: str, site: CallSite, pinned_loops: dict) -> list:
    """The copy is of a parameter of its function (or of the items of one: `for key, ipt in
    inputs.items():`), and calls of that function, in this file or another of the project, hand
    it a batch of a pinned loader's loop: those (model, loop) pairs. Other calls (a batch drawn
    once for a validation step, a tensor made elsewhere) do not matter: `non_blocking=True` on
    a pageable tensor copies as before."""
    info = site.ctx.function
    if info is None:
        return []
    param = root if root in info.params else (
        _iterated_parameter(info, root, site) or _unpacked_parameter(model, info, root, site))
    if param is None:
        return []
    positional = [p.name.value for p in (*info.node.params.posonly_params, *info.node.params.params)]
    position = positional.index(param) - info.receiver_params if param in positional else -1
    callers = model.callers(info)
    out = []
    for owner, call in callers:
        arg = call_argument(call.node, param, position) if position >= 0 else None
        handed = root_name(arg.value) if arg is not None and _plain_selection(arg.value) else None
        found = _pinned_loop(owner, handed, call, pinned_loops if owner is model else {}) if handed else None
        if found is not None:
            out.append((owner, found))
    return out


def _unpacked_parameter(model: FileModel, info, root: str, site: CallSite) -> Optional[str]:
    """The parameter ``root`` is a piece of where ``site`` reads it: every binding that reaches
    the read takes it from that parameter (`image, qpos = data`, `x = batch["x"]`), never
    rebound in between."""
    reach = model.bindings.reaching(root, site.ctx, site.order)
    if reach.parameter is not None:
        return None
    earlier = [a for a in reach.assignments if not (a.statement is not None and contains(a.statement, site.node))]
    found = set()
    for binding in earlier:
        value = bound_element(binding) if binding.index is None or type(binding.value) in (cst.Tuple, cst.List) \
            else binding.value  # `image, qpos = data`: pieces of the parameter itself
        if value is None or binding.ctx.function is not info:
            return None
        while type(value) in (cst.Attribute, cst.Subscript):
            value = value.value
        if type(value) is not cst.Name or value.value not in info.params:
            return None
        read = model.bindings.reaching(value.value, binding.ctx, binding.order)
        if read.assignments or read.parameter is not info:
            return None
        found.add(value.value)
    return found.pop() if len(found) == 1 else None


def _iterated_parameter(info, root: str, site: CallSite) -> Optional[str]:
    """The parameter a `for` loop of the function around ``site`` goes over, when ``root`` is
    that loop's target (`for key, ipt in inputs.items():`, `for t in batch:`)."""
    loop = site.ctx.loop
    while loop is not None and loop.function is info:
        node = loop.node
        if type(node) is cst.For and root in loop.targets:
            iterable = node.iter
            if type(iterable) is cst.Call and type(iterable.func) is cst.Attribute \
                    and iterable.func.attr.value in ("items", "values") and not iterable.args:
                iterable = iterable.func.value
            if type(iterable) is cst.Name and iterable.value in info.params:
                return iterable.value
            return None
        loop = loop.parent
    return None


class BlockingCopyFromPinnedLoader(Rule):
    code = "GPU203"
    name = "blocking-copy-from-pinned-loader"
    summary = "batch from a pinned DataLoader copied to the GPU without `non_blocking=True`"
    what = """
        `.to(device)`, `.cuda()` or `.type(torch.cuda.FloatTensor)` without `non_blocking=True`,
        applied to a loop variable (or a piece of one: `batch["x"]`, `x, y = batch`, a sample
        made a batch of one, `batch["x"][i].unsqueeze(0)`, also
        wrapped in PyTorch 0.3's `Variable(x)`) of a loop over a DataLoader built with
        `pin_memory=True`, or over a dict of such loaders picked by a key (`dataloaders[phase]`)
        (written in the call or a `**kwargs` dict,
        also one handed from module to module as a keyword, or read from a constant, a settings
        object, the default of a command-line option, of a yacs config node or of an environment
        variable, `str(os.getenv("PIN_MEMORY", True)).lower() == "true"`; or pinned in one
        setup of two, `pin_memory=True if cache_device == "cpu" else False`, the one whose
        batches are copied at all; or pinned by a flag that holds exactly on a CUDA run,
        `pin_memory=use_gpu`, `pin_memory=torch.cuda.is_available()`), or
        to a batch drawn from one with `next(it)` (through `iter(loader)`,
        `itertools.cycle(loader)` or a generator that yields the batches as they come, also one
        that goes round the loader with `for loader in itertools.repeat(data_loader):`; not one
        that moves or changes them first), or to a parameter of a function (or an item of one:
        `for key, ipt in inputs.items():`, or a piece it unpacks: `image, qpos = data`) that such
        a loop hands its batch to, in this file or another of the project (`outputs =
        self.process_batch(inputs)`, `calc_loss_batch(x, y, model, device)`). Only copies from the host to a device: `.cpu()`,
        `.to("cpu")` and dtype conversions are never reported. A loader built by Ignite's
        `idist.auto_dataloader(...)` without `pin_memory` is pinned (it pins on CUDA by itself).
        An Ignite `create_supervised_trainer(model, optimizer, loss_fn, device=<cuda>)` whose
        engine runs over pinned loaders is reported at its call when it gets no
        `non_blocking=True` and no `prepare_batch` of the user's: ignite's default
        `prepare_batch` then makes each copy with `non_blocking=False`. A loop whose body ends
        with a `break` nothing skips copies one batch: information. So is a copy in a probe
        of a few batches run once beside the training (a learning-rate finder whose `enumerate`
        counter breaks out after at most 200 rounds, in a file whose training loop runs on). So is a copy in an
        evaluation pass (a loop in a function that does not train, short or whole) that the
        training loop runs every few steps or once per epoch (also one written inline in the
        epoch loop beside the training pass, or after the training pass of a function that
        runs one epoch, `fit_one_epoch`, or a copy under a test that holds every few steps,
        `if step % eval_freq == 0:`): each wait costs that pass, not a training step. So is a
        copy in a loop that trains nothing and, on every pass, reads a result back to the host and
        writes a file (`output.cpu().numpy()` saved as an image) or runs without autograd (a test
        pass under `no_grad` that adds each batch's `dice.item()`, a feature dump that `.cpu()`s
        each batch's embeddings): the read empties the GPU's queue, so the next copy has no work
        to overlap with. A
        generator's loop is not one: it runs where the training loop draws from it. So is a copy
        from loaders of token ids (a `collate_fn` that tokenises the texts or packs id lists
        into integer tensors, pads them, `pad_sequence` of an ids field or with
        `padding_value=pad_idx`, or stacks labels as longs, and builds no other tensor, or a dataset that tokenises each
        item): a batch of a few kilobytes waits next to nothing.
    """
    why = """
        Pinned memory exists so that the copy can run as an asynchronous DMA transfer. A plain
        `.to(device)` still makes the host wait until the copy has finished, so the pinning
        buys little: with `non_blocking=True` the host goes on queueing the forward pass while
        the batch travels, and CUDA's stream order guarantees the kernels see the whole batch.
    """
    example = """
        loader = DataLoader(train_set, batch_size=64, num_workers=8, pin_memory=True)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
    """
    instead = """
        loader = DataLoader(train_set, batch_size=64, num_workers=8, pin_memory=True)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    """
    hint = "add `non_blocking=True` to host-to-device copies of pinned batches"
    fixable = Fixable.SAFE
    fix_safety = """
        The fix adds `non_blocking=True` to a host-to-device copy of a batch that comes from a
        loader built with a literal `pin_memory=True` (or by `idist.auto_dataloader` on CUDA), or
        to the `create_supervised_trainer(...)` call whose default `prepare_batch` makes the
        copies. It is safe because CUDA runs the copy and
        the kernels queued after it on the same stream in order: they see the whole batch. It
        assumes that:

        - the copied tensor is used on the current stream (code that reads it on another stream
          must already synchronise the two);
        - the host batch is not modified in place after the copy is queued (the copy may still be
          reading it).

        Only copies to a CUDA device are reported; a copy to the host never gets this fix, since
        the host could read the buffer before the data arrives.
    """
    references = (
        (
            "A guide on good usage of non_blocking and pin_memory()",
            "https://docs.pytorch.org/tutorials/intermediate/pinmem_nonblock.html",
        ),
        (
            "CUDA semantics: use pinned memory buffers",
            "https://docs.pytorch.org/docs/stable/notes/cuda.html#use-pinned-memory-buffers",
        ),
        ("torch.Tensor.to", "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.to.html"),
    )
    # The copy is the rule's own pattern; the loader (and its `pin_memory`, which may be
    # positional) may be built in a module next to it.
    # An Ignite trainer's copies are in ignite's `prepare_batch`: its call stands for them.
    requires = (
        (".to(", ".cuda(", ".type(", "create_supervised_trainer"),
        ("DataLoader", "auto_dataloader"),
        ("True", "pin_mem", "auto_dataloader"),
    )

    def check(self, model: FileModel) -> Iterator[Report]:
        pinned_loops: dict = {}
        for site in model.method_calls("to", "cuda", "type"):
            call = site.node
            if not is_device_move(model, site) or _has_keyword(call, "non_blocking"):
                continue
            if site.method == "to" and _device_kind(model, _first_arg(call), site.ctx, site.order) != "cuda":
                continue  # `.to(dtype)` spelled with a variable, `.to(other_tensor)`
            if any(a.star for a in call.args):
                continue
            positional = [a for a in call.args if a.keyword is None]
            if len(positional) >= (3 if site.method == "to" else 2):
                continue  # non_blocking given by position (`.type(t, non_blocking)` too)
            drawn = _drawn_here(model, site, pinned_loops)
            if drawn is not None:
                loops = [(model, drawn)]  # `data = next(self.dl).cuda()`
            else:
                # `Variable(x).cuda()` (PyTorch 0.3) copies the wrapped batch itself.
                receiver = variable_inner(model, site.receiver) if site.receiver is not None else None
                receiver = _views_stripped(receiver)
                if not _plain_selection(receiver):
                    continue  # `batch["x"].float().to(device)`: the copy is of a new, pageable tensor
                root = root_name(receiver) if receiver is not None else None
                if root is None:
                    continue
                found = _pinned_loop(model, root, site, pinned_loops)
                if found is not None:
                    loops = [(model, found)]
                else:
                    # A helper handed the batch (`outputs = self.process_batch(inputs)`, then
                    # `for key, ipt in inputs.items(): inputs[key] = ipt.to(self.device)`).
                    loops = _pinned_through_callers(model, root, site, pinned_loops)
                    if not loops:
                        continue
            if call.args:
                edit = NodeEdit(call.args[-1].value, ", non_blocking=True", "after")
            else:
                edit = NodeEdit(call.whitespace_before_args, "non_blocking=True", "after")
            fix = FixSpec("add `non_blocking=True`", (edit,))
            if all(single_pass(owner, loop) and not self._evaluated_now_and_then(owner, loop) for owner, loop in loops):
                yield self.report(
                    call,
                    "copy of a pinned batch without `non_blocking=True` (one batch: the loop is left "
                    "after its first pass)",
                    severity=Severity.INFO,
                    fix=fix,
                )
                continue
            if all(short_probe(owner, loop) for owner, loop in loops):
                yield self.report(
                    call,
                    "copy of a pinned batch without `non_blocking=True` (a probe of a few batches "
                    "run once, such as a learning-rate finder, not the training run)",
                    severity=Severity.INFO,
                    fix=fix,
                )
                continue
            if all(pinned_loops.get(("ids-of-loop", id(loop)), False) for _, loop in loops):
                yield self.report(
                    call,
                    "copy of a pinned batch without `non_blocking=True` (a batch of token ids, a few "
                    "kilobytes: the wait is short)",
                    severity=Severity.INFO,
                    fix=fix,
                )
                continue
            if all(reads_back_each_pass(owner, loop) for owner, loop in loops):
                yield self.report(
                    call,
                    "copy of a pinned batch without `non_blocking=True` (the loop trains nothing and "
                    "reads its results back to the host on every pass: no queued work to overlap)",
                    severity=Severity.INFO,
                    fix=fix,
                )
                continue
            if all(self._evaluated_now_and_then(owner, loop) for owner, loop in loops) or model.guards.periodic(site.ctx):
                yield self.report(
                    call,
                    "copy of a pinned batch without `non_blocking=True` (in an evaluation pass "
                    "run every few steps or once per epoch, not on every step)",
                    severity=Severity.INFO,
                    fix=fix,
                )
                continue
            yield self.report(
                call,
                "copy of a pinned batch without `non_blocking=True`: the host waits for the transfer "
                "instead of queueing the next kernels",
                fix=fix,
            )
        yield from self._engine_trainers(model)

    @staticmethod
    def _evaluated_now_and_then(model: FileModel, loop) -> bool:
        # A blocking copy costs its own wait only: in an evaluation pass run every few steps
        # or once an epoch, whole or not, that is no training step's wait.
        return evaluated_now_and_then(model, loop, short=False)

    def _engine_trainers(self, model: FileModel) -> Iterator[Report]:
        """`create_supervised_trainer(model, optimizer, loss_fn, device=<cuda>)` whose engine runs
        over pinned loaders: ignite's default `prepare_batch` copies each batch with
        `convert_tensor(x, device, non_blocking=non_blocking)`, and `non_blocking` is False unless
        given. Not when a `prepare_batch` of the user's does the copy, or arguments come through
        `*args`/`**kwargs`."""
        seen = set()
        for run in engine_runs(model):
            build = run.build
            call = build.call
            if build.kind != TRAINER or build.model is not model or id(call) in seen:
                continue
            if any(a.star for a in call.args) or argument(call, "non_blocking", 4) is not None:
                continue
            if argument(call, "prepare_batch", 5) is not None:
                continue
            sites, exhaustive = run.loaders
            if not exhaustive or not sites or not engine_moves_batches(run):
                continue
            owners = [owner_of(model, s) for s in sites]
            if not all(o is not None and _pinned(o, s) for o, s in zip(owners, sites)):
                continue
            seen.add(id(call))
            yield self.report(
                call,
                "Ignite trainer copies each batch of a pinned loader to the GPU without "
                "`non_blocking=True`: the host waits for every transfer",
                fix=FixSpec("add `non_blocking=True`", (NodeEdit(call.args[-1].value, ", non_blocking=True", "after"),)),
                related=[(run.site.node, "engine run")],
            )
