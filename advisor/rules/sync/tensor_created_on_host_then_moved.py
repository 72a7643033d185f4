"""GPU106 `tensor-created-on-host-then-moved`: tensor built in host memory and then copied to the GPU (`torch.zeros(n).cuda()`)."""

from __future__ import annotations
from typing import Iterator, Optional, Set
import libcst as cst
from advisor.findings import Applicability, Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.model.framework_steps import branch_untaken, runs_per_batch
from advisor.model.tensors import given_python_data, host_built_from, is_host_tensor, is_numpy, is_raw_batch, names_cuda
from advisor.model.devices import cuda_tensor_type, is_dtype, names_cuda_type
from advisor.model.names import dotted_name
from advisor.model.subtree import iter_names
from advisor.model.guards import guards_of


_PLAIN_FACTORIES = frozenset("zeros ones empty full arange linspace logspace eye tensor as_tensor".split())


_RANDOM_FACTORIES = frozenset("rand randn randint randperm".split())

# The legacy typed constructors (`torch.FloatTensor([w, h, w, h])`) build on the host; they take
# no `device=`, so the finding has no fix. A script that changes the default tensor type or
# device may build them on the GPU: such files are left alone.
def _converted_name(expr: cst.BaseExpression) -> Optional[str]:
    """`buf` in `buf.long()`, `buf.float().contiguous()` or `buf[:, picked]` (a slice of a
    staging buffer): a name under conversions and subscripts only."""
    while True:
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _CONVERSIONS:
            expr = expr.func.value
        elif type(expr) is cst.Subscript:
            expr = expr.value
        else:
            break
    return expr.value if type(expr) is cst.Name else None


_CONVERSIONS = frozenset({"long", "int", "float", "half", "double", "bool", "contiguous", "detach"})


def _host_data(model: FileModel, value: cst.BaseExpression) -> bool:
    """Values that live on the host: a numpy call (`np.random.normal(...)`), a list or tuple."""
    if type(value) in (cst.List, cst.Tuple, cst.ListComp):
        return True
    return type(value) is cst.Call and (model.imports.qualify(value.func) or "").startswith("numpy.")


_TYPED = frozenset(
    "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor "
    "CharTensor ByteTensor BoolTensor".split()
)
_DEFAULT_PLACEMENT = ("torch.set_default_tensor_type", "torch.set_default_device")


# Factories whose values do not depend on the dtype they are computed in: a `.to(dtype)` can move in.
_DTYPE_MOVABLE = frozenset("zeros ones empty full eye tensor as_tensor".split())


def _filled_before(model: FileModel, site: CallSite, name: str) -> bool:
    """`name[...] = ...` runs before the copy: earlier in the code, or later in a loop around
    the copy when the copy does not rebind the name (`targets = targets.cuda()` then
    `targets[neg, :] = 0` writes into the device copy, not into a host buffer)."""
    record = model.facts.subscript_stores.get((site.ctx.scope, name))
    if record is None or record[2]:
        return False  # `attr[:, 7] = 4` writes a number the device could write as well
    if record[0] < site.order:
        return True
    if site.assigned_to == name:
        return False
    loop = site.ctx.loop
    while loop is not None:
        if id(loop) in record[1]:
            return True
        loop = loop.parent
    return False


def _iterated_first(model: FileModel, site: CallSite, name: str, bound: float) -> bool:
    """`levels = torch.randint(...)`, then `[o[..., :l + 1] for o, l in zip(xs, levels)]`, and
    only then `levels.to(device)`: its values are read one by one on the host first, as slice
    bounds or numbers. Built on the device, each of those reads would wait for the GPU."""
    info = site.ctx.function
    if info is None:
        return False
    for binder in info.binders:
        if type(binder) not in (cst.For, cst.CompFor):
            continue
        order = model.order_of(binder)
        if bound < order < site.order and name in iter_names(binder.iter):
            return True
    return False


def _fills_cache(model: FileModel, site: CallSite) -> bool:
    """The block stores something on the object (`self.cached_matrix = a`), or runs on a miss
    of a table the object keeps (`if key not in self.cache:`): built once, not on every call."""
    return id(site.ctx) in model.shared("sync.attribute-store-blocks", _attribute_store_blocks) or _cache_miss(site)


def _cache_miss(site: CallSite) -> bool:
    """The code runs on a miss of a table the object keeps (`if key not in self.cache:`)."""
    for guard in guards_of(site.ctx):
        test = guard.test
        if (guard.positive and not guard.exits and type(test) is cst.Comparison and len(test.comparisons) == 1
                and type(test.comparisons[0].operator) is cst.NotIn
                and (dotted_name(test.comparisons[0].comparator) or "").startswith("self.")):
            return True
    return False


def _attribute_store_blocks(model: FileModel) -> Set[int]:
    return {
        id(a.ctx) for (_, name), found in model.facts.assignments.items() if name.startswith("self.") for a in found
    }



def _root_call(expr: cst.BaseExpression) -> Optional[cst.Call]:
    """The call at the start of a method chain (`torch.Tensor([]).long()` gives the constructor)."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and type(expr.func.value) is cst.Call:
        expr = expr.func.value
    return expr if type(expr) is cst.Call else None


# In-place fills that follow a typed constructor given sizes (`torch.LongTensor(n).fill_(0)`).
_FILLS = frozenset({"fill_", "zero_", "uniform_", "normal_", "random_", "bernoulli_", "exponential_"})


def _data_built_on_device(model: FileModel, factory: cst.Call, kind: str, top: cst.BaseExpression, ctx) -> bool:
    """The factory is not given Python values (`tensors.given_python_data`): its data is one a
    factory could make on the device itself. A typed constructor given one name (or one
    arithmetic expression) may be given a size or data: a size when a fill follows
    (`torch.LongTensor(n).fill_(0)`)."""
    positional = [a for a in factory.args if a.keyword is None and not a.star]
    if len(positional) == 1 and is_numpy(model, positional[0].value, ctx):
        return False  # `torch.LongTensor(labels.reshape(n, k))` of a NumPy array: data from the host
    # `torch.FloatTensor(1 - done)` may be a size or an array's data as much as a name is.
    lone = len(positional) == 1 and type(positional[0].value) in (
        cst.Name, cst.Attribute, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation)
    if lone and type(positional[0].value) is cst.BinaryOperation and any(
            type(side) in (cst.List, cst.Tuple) for side in (positional[0].value.left, positional[0].value.right)):
        lone = False  # `[label] * n`: a list, data made of one value
    if kind in _TYPED and lone:
        return any(
            type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _FILLS
            for node in _chain_above(factory, top)
        )
    return not given_python_data(model, factory, kind)


def _chain_above(factory: cst.Call, move: cst.Call):
    """The calls of the method chain from ``move`` down to ``factory`` (`.fill_(0)` in
    `torch.LongTensor(n).fill_(0).to(device)`)."""
    node = move
    while type(node) is cst.Call and node is not factory and type(node.func) is cst.Attribute:
        yield node
        node = node.func.value


def _empty(factory: Optional[cst.BaseExpression]) -> bool:
    """A factory that builds an empty tensor: from an empty list or tuple of data
    (`torch.tensor([])`, `torch.Tensor([])`), or with a size of 0 (`torch.zeros(0, 4)`,
    `torch.empty((0,))`, `torch.Tensor(0)`, `torch.empty(n, 0)`)."""
    if type(factory) is not cst.Call or not factory.args:
        return False
    first = factory.args[0]
    if first.keyword is not None or first.star:
        return False
    value = first.value
    last = dotted_name(factory.func) or ""
    last = last.rsplit(".", 1)[-1]
    if last in ("tensor", "as_tensor") or (last in _TYPED and type(value) in (cst.List, cst.Tuple)):
        return type(value) in (cst.List, cst.Tuple) and not value.elements  # data: none of it
    if last not in _SIZED and last not in _TYPED:
        return False  # `torch.linspace(0, 1, 50)`, `torch.arange(0, n)`: the 0 is no size
    if type(value) in (cst.List, cst.Tuple):
        if not value.elements:
            return False  # `torch.zeros(())`: one number
        sizes = [e.value for e in value.elements if type(e) is cst.Element]
    elif last == "full":
        return False  # its first argument is the size, given as a tuple
    else:
        sizes = [a.value for a in factory.args if a.keyword is None and not a.star]
    # Any size of 0 leaves no element (`torch.empty(n, 0)`, `torch.zeros((batch, 0))`).
    return any(type(size) is cst.Integer and size.value == "0" for size in sizes)


# Factories whose positional arguments are the sizes.
_SIZED = frozenset({"zeros", "ones", "empty", "full", "rand", "randn"})


class _Move:
    """What a `.cuda()`/`.to()` call asks for: the device expression to pass to the factory
    (None when the move cannot be folded into it), and a dtype to fold in too."""

    def __init__(self, device: Optional[cst.BaseExpression], dtype: Optional[cst.BaseExpression] = None) -> None:
        self.device = device
        self.dtype = dtype


def _parse_move(model: FileModel, site: CallSite) -> Optional[_Move]:
    """The move as a host-to-device copy, or None when the call is no such copy."""
    args = site.node.args
    if any(a.star for a in args):
        return None
    keywords = {a.keyword.value: a.value for a in args if a.keyword is not None}
    positional = [a.value for a in args if a.keyword is None]
    if site.method == "type_as":
        # `torch.ones(n).type_as(x)`: the type of `x`, and its device (older code's way of
        # placing a new tensor beside another).
        if len(positional) == 1 and not keywords and _device_tensor(model, positional[0], site):
            return _Move(None)
        return None
    if site.method == "type":
        # `torch.zeros(b, n).type(x.type())`: the type string of `x` names its device too
        # (`torch.cuda.FloatTensor`), so the new host tensor is copied to where `x` is.
        typed = positional[0] if len(positional) == 1 and not keywords else None
        if (type(typed) is cst.Call and not typed.args and type(typed.func) is cst.Attribute
                and typed.func.attr.value == "type" and _device_tensor(model, typed.func.value, site)):
            return _Move(None)
        return None
    if site.method == "cuda":
        if positional or set(keywords) - {"non_blocking"}:
            return _Move(None)  # `.cuda(local_rank)`: a CUDA move, but which spelling of the device?
        return _Move(cst.SimpleString('"cuda"'))
    device = keywords.get("device", positional[0] if positional else None)
    if device is not None and "device" not in keywords and _device_tensor(model, device, site):
        # `torch.zeros(1).to(x)` with `x` a tensor on the GPU: moved to where `x` is
        return _Move(None) if len(positional) == 1 and not keywords.keys() - {"non_blocking"} else None
    if device is None or not names_cuda(model, device, site.ctx, site.order):
        return None
    rest = positional[1:] if "device" not in keywords else positional
    dtype = keywords.get("dtype")
    if rest and dtype is None and is_dtype(model, rest[0]):
        dtype, rest = rest[0], rest[1:]
    if len(rest) > 1 or set(keywords) - {"device", "dtype", "non_blocking"}:
        return _Move(None)  # `copy=`, `memory_format=`: keep the author's spelling
    return _Move(device, dtype)


def _device_tensor(model: FileModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """A tensor (not a device, not a dtype) that lives on the GPU: not known to be in host
    memory, nor a batch not yet moved."""
    if type(expr) not in (cst.Name, cst.Attribute) or is_dtype(model, expr):
        return False
    if not model.is_tensor(expr, site.ctx) or model.kinds(expr, site.ctx, site.order):
        return False
    return not is_host_tensor(model, expr, site.ctx, site.order) and not is_raw_batch(model, expr, site.ctx, site.order)


class TensorCreatedOnHostThenMoved(Rule):
    code = "GPU106"
    name = "tensor-created-on-host-then-moved"
    summary = "tensor built in host memory and then copied to the GPU (`torch.zeros(n).cuda()`)"
    what = """
        A torch factory (`torch.zeros`, `ones`, `empty`, `full`, `arange`, `linspace`, `eye`,
        `tensor`, `as_tensor`, and the random `rand`, `randn`, `randint`, `randperm`) whose
        result is immediately moved with `.cuda()`, `.to(<cuda device>)`, `.type_as(x)` or
        `.type(x.type())` with `x` a tensor on the GPU (those two reported without a fix). A `.to()` that only
        changes the dtype, or moves to the CPU, is not a move to the GPU; `.to(x)` with `x` a
        tensor on the GPU (not one in host memory, nor a batch not yet moved) is one, reported
        without a fix. Inside the innermost
        training loop, a loop over a DataLoader, or the `forward` of an `nn.Module` subclass
        (also of a graph library's layer base, `torch_geometric.nn.MessagePassing`) (and the
        functions of the file it calls), which runs on every batch however the model
        is built, it is a warning (not in a block that stores on the object, as a cache filled
        on a miss does); elsewhere (set-up code, once per epoch), and anywhere on a miss of a
        table the object keeps (`if key not in self.cache:`) or in a function whose results
        are cached (`@functools.lru_cache`), it is informational; so it is in an evaluation
        loop over a loader under a test that holds rarely there (`if grid is None:` on the
        first batch, every few batches).
        `torch.tensor(...)` and `torch.as_tensor(...)` count only for data a factory could make
        on the device itself: a number, numbers all equal (`[0]`, `[label] * n`), `range(n)`; Python values
        (`torch.tensor(labels)`, `torch.tensor([w, h, w, h])`, NumPy arrays) cross the host link
        whichever way the tensor is made, and are left alone. The legacy typed constructors
        count too, without a fix, when given sizes (`torch.FloatTensor(n, h)`,
        `torch.LongTensor(n).fill_(0)`: one name or expression counts as a size only when a fill
        follows, since `torch.FloatTensor(1 - done)` converts an array) or such data (`torch.LongTensor(range(n))`), unless the
        file changes the default tensor type or device. So does a CUDA tensor type held in a name given host data
        (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`, then
        `Tensor(np.random.normal(0, 1, (n, d)))`: the values are drawn on the host and copied;
        `Tensor(n, 1).fill_(1.0)` allocates on the device and is left alone). A value the host
        fills in item by item before the copy (`buf[i, :n] = torch.tensor(ids)`, also converted
        on the way: `buf.long().to(dev)`) is a staging buffer, and is left alone (not one whose
        every store writes a number at a place written in the code, `attr[:, 0] = 4`: the
        device could write it as well); a name bound to `None` on some paths (`extra_zeros =
        None`, then a factory under a test) is judged by its other bindings, since a move of None
        raises; so is an empty
        tensor (`torch.Tensor([])`, `torch.zeros(0, 4)`, `torch.empty(n, 0)`), which copies nothing, a tensor the
        host goes over item by item before the copy (`levels = torch.randint(...)`, then
        `zip(xs, levels)` for slice bounds: on the device each item would be a sync), and a
        factory in a `@torch.compile` function or a helper only such functions call (the
        compiler builds constructors on the device their result goes to). Nothing is
        reported in a file when it, or a project file around it (the training script that
        imports a loss module), makes CUDA the default tensor type or device: factories then
        build on the GPU. A module that never names CUDA (a loss or an embedding helper that
        moves to `x.device`) is checked when a project file around it uses CUDA: its inputs
        come from that script; so is one of a project that trains through Hugging Face's
        `Trainer` or Accelerate (a trainer module up to three imports away), which put the model
        on the GPU themselves (not a library's modules). The `forward` of a model deriving from
        the file's own module base (`class Retrieval(VideoTextBase)` where `VideoTextBase(nn.Module)`)
        runs every batch, outside a library (an installable package or a vendored copy, whose
        model families serve modes a config picks). A handler of an fp16 step whose gradients
        overflowed (`except OverflowError:`) runs on failed steps only: information.
    """
    why = """
        The tensor is first allocated and filled by the CPU in ordinary host memory, then copied
        across the host link into a second allocation on the GPU. Passing `device=` allocates
        and fills it on the GPU directly: no host work, no transfer, no temporary. In a loop
        that runs every step the wasted copy is paid every step.
    """
    example = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            weights = torch.ones(y.size(0)).cuda()
            positions = torch.arange(x.size(1)).to(device)
    """
    instead = """
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            weights = torch.ones(y.size(0), device="cuda")
            positions = torch.arange(x.size(1), device=device)
    """
    hint = "pass `device=` to the factory and drop the `.cuda()`/`.to()`"
    fixable = Fixable.SOMETIMES_SAFE_OR_UNSAFE
    fix_safety = """
        The fix passes the move's device (and a dtype given to `.to()`) to the factory and drops
        the move. It is safe when the tensor's values do not depend on where they are computed:
        `zeros`, `ones`, `empty`, `full`, `eye`, `tensor`, `as_tensor`, `arange`, `linspace`,
        `logspace`. It assumes:

        - the device expression means the same in the factory call as in the move (it is copied
          as written);
        - a dtype folded into the factory fits the values: `.to(torch.uint8)` wraps an
          out-of-range integer, while `dtype=torch.uint8` in `torch.full`/`torch.tensor` raises;
        - float `arange`/`linspace`/`logspace` results may differ in the last bit between the CPU
          and GPU kernels, which the fix treats as the same values.

        Offered as unsafe for the random factories (`rand`, `randn`, `randint`, `randperm`): the
        GPU generator draws different numbers than the CPU one, so seeded runs change. Also
        unsafe with `requires_grad=True`: the result becomes a leaf that receives `.grad`, where
        before the gradient went to the CPU tensor. Not offered when the move names its device in
        a form the factory cannot take as written (`.cuda(rank)`), has other arguments
        (`copy=`, `memory_format=`), or folds a dtype into a factory whose values depend on it.
    """
    references = (
        (
            "Performance Tuning Guide: create tensors directly on the target device",
            "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html#create-tensors-directly-on-the-target-device",
        ),
        (
            "torch/profiler/_pattern_matcher.py: `ExtraCUDACopyPattern`",
            "https://github.com/pytorch/pytorch/blob/main/torch/profiler/_pattern_matcher.py",
        ),
        (
            "Reproducibility: random number generators per device",
            "https://docs.pytorch.org/docs/stable/notes/randomness.html",
        ),
    )
    requires = (
        (".cuda(", ".to(", "Tensor(", ".type_as(", ".type("),
        ("cuda", "device"),  # `.to(x.device)` in a loss module: the project may name CUDA (cuda_in_project)
        ("zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "tensor", "Tensor"),
    )

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.cuda_in_project or model.cuda_default_placement_in_project():
            return  # with CUDA the default place of new tensors, factories build on the GPU
        typed = None
        for site in model.method_calls("cuda", "to", "type_as", "type"):
            factory = site.receiver
            if factory is None or _compiled(model, site.ctx.function):
                continue
            qual = model.imports.qualify(factory.func) if type(factory) is cst.Call else None
            head, _, kind = (qual or "").rpartition(".")
            if head == "torch" and kind in _TYPED:
                if typed is None:
                    typed = not any(model.calls_to(q) for q in _DEFAULT_PLACEMENT)
                if _empty(factory):
                    continue
                if (typed and not any(a.star or a.keyword is not None for a in factory.args)
                        and _data_built_on_device(model, factory, kind, site.node, site.ctx) and _parse_move(model, site)):
                    yield self.report(
                        site.node,
                        "`torch.{factory}(...)` is built in host memory and then copied to the GPU",
                        severity=self._severity(model, site),
                        data={"factory": kind},
                    )
                continue
            if head != "torch" or (kind not in _PLAIN_FACTORIES and kind not in _RANDOM_FACTORIES):
                report = self._built_before(model, site)
                if report is not None:
                    yield report
                continue
            if _empty(factory):
                continue  # `torch.zeros(0, 4).cuda()`: nothing is copied
            if any(a.star == "**" for a in factory.args) or any(
                a.keyword is not None and a.keyword.value in ("device", "out", "pin_memory") for a in factory.args
            ):
                continue  # a `**` spread may hold the device; a `*shape` spread cannot
            if kind in ("tensor", "as_tensor") and not _data_built_on_device(model, factory, kind, site.node, site.ctx):
                continue  # Python data crosses the host link whichever way the tensor is made
            move = _parse_move(model, site)
            if move is None:
                continue
            yield self.report(
                site.node,
                "`torch.{factory}(...)` is built in host memory and then copied to the GPU",
                severity=self._severity(model, site),
                fix=self._fix(model, factory, kind, move, site),
                data={"factory": kind},
            )
        yield from self._typed_from_host(model)

    def _typed_from_host(self, model: FileModel) -> Iterator[Report]:
        """`Tensor(np.random.normal(0, 1, (n, d)))` where `Tensor = torch.cuda.FloatTensor if
        cuda else torch.FloatTensor`: the values are drawn on the host, then copied. (`Tensor(n,
        1).fill_(1.0)` allocates on the device and copies nothing.)"""
        names = {
            name for (_, name), found in model.facts.assignments.items()
            if "." not in name and any(
                type(a.value) in (cst.IfExp, cst.Attribute) and names_cuda_type(model, a.value) for a in found
            )
        }
        for name in sorted(names):
            for site in model.facts.calls_by_callee.get(name, ()):
                call = site.node
                if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                    continue
                if not _host_data(model, call.args[0].value) or not cuda_tensor_type(model, call.func, call):
                    continue
                yield self.report(
                    call,
                    "`{name}(...)` copies values built in host memory to the GPU (`{name}` is a CUDA tensor type)",
                    severity=self._severity(model, site),
                    data={"name": name},
                )

    def _built_before(self, model: FileModel, site: CallSite) -> Optional[Report]:
        """`emb = torch.exp(torch.arange(n) * -c)` then `emb.to(t.device)`: the factory is not the
        receiver itself, so no fix is offered; the copy is the same."""
        kind = host_built_from(model, site.receiver, site.ctx, site.order)
        if not kind or _parse_move(model, site) is None:
            return None
        if kind in _TYPED and any(model.calls_to(q) for q in _DEFAULT_PLACEMENT):
            return None
        name = site.receiver.value if type(site.receiver) is cst.Name else None
        filled = name or _converted_name(site.receiver)
        if filled is not None and _filled_before(model, site, filled):
            # A staging buffer the host fills in (`buf[i, :n] = torch.tensor(ids)`), then copies
            # once, also converted on the way (`buf.long().to(device)`).
            return None
        if name is not None:
            found = model.reaching(name, site.ctx, site.order)
            if found and all(a.value is not None and a.index is None and _empty(_root_call(a.value)) for a in found):
                return None  # `scores = torch.Tensor([])`, later `scores.cuda()`: an empty tensor, nothing copied
            if found and _iterated_first(model, site, name, max(a.order for a in found)):
                return None
        return self.report(
            site.node,
            "`torch.{factory}(...)` is built in host memory and then copied to the GPU",
            severity=self._severity(model, site),
            data={"factory": kind},
        )

    def _severity(self, model: FileModel, site: CallSite) -> Severity:
        if _cache_miss(site) or (site.ctx.function is not None and site.ctx.function.memoized):
            return Severity.INFO  # built once per key, then read from the object's table or the cache
        heat = model.sync_heat(site.ctx)
        if heat is not None:
            return self.severity_for(heat)
        loop = site.ctx.loop
        while loop is not None:
            if loop.over_loader:
                # An evaluation or preprocessing loop: once per batch, unless a guard makes it
                # rare there (`if grid is None: grid = torch.zeros(...).to(dev)`: the first batch).
                return Severity.INFO if model.guards.gated(site.ctx, ranks=False) else self.severity
            loop = loop.parent
        info = site.ctx.function
        if (site.ctx.loop is None and info is not None and runs_per_batch(model, info) and not _fills_cache(model, site)
                and not model.guards.gated(site.ctx) and not branch_untaken(model, site.ctx, info)):
            return self.severity  # a module's forward: once per batch, however the module is built
        return Severity.INFO

    def _fix(self, model: FileModel, factory: cst.Call, kind: str, move: _Move, site: CallSite) -> Optional[FixSpec]:
        if move.device is None:
            return None
        keywords = {a.keyword.value for a in factory.args if a.keyword is not None}
        new_args = list(factory.args)
        if move.dtype is not None:
            if "dtype" in keywords or kind not in _DTYPE_MOVABLE:
                return None
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        added = [cst.Arg(value=move.device, keyword=cst.Name("device"), equal=equal)]
        if move.dtype is not None:
            added.append(cst.Arg(value=move.dtype, keyword=cst.Name("dtype"), equal=equal))
        trailing = new_args[-1].comma if new_args else cst.MaybeSentinel.DEFAULT
        if type(trailing) is cst.Comma:
            # A trailing comma (one argument per line): the new ones follow the same layout.
            inner = new_args[-2].comma if len(new_args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            new_args[-1] = new_args[-1].with_changes(comma=inner)
            added = [a.with_changes(comma=inner) for a in added[:-1]] + [added[-1].with_changes(comma=trailing)]
        new_args.extend(added)
        replacement = model.code(factory.with_changes(args=new_args))
        unsafe = kind in _RANDOM_FACTORIES or "requires_grad" in keywords
        message = "pass `device=` to the factory and drop the copy"
        if kind in _RANDOM_FACTORIES:
            message += " (the GPU generator draws different values)"
        return FixSpec(
            message,
            (NodeEdit(site.node, replacement),),
            Applicability.UNSAFE if unsafe else Applicability.SAFE,
        )


def _compiled(model, info, depth: int = 0) -> bool:
    """A function decorated with `@torch.compile`, or one only such functions call (traced into
    the same graph): the compiler moves tensor constructors to the device their result goes to,
    so nothing is built on the host."""
    if info is None:
        return False
    if any(d.split("(")[0] in ("torch.compile", "compile") for d in info.decorators):
        return True
    callers = model.call_sites(info)
    return depth < 2 and bool(callers) and all(_compiled(model, c.ctx.function, depth + 1) for c in callers)
