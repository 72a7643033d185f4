"""The input pipeline: how batches reach the GPU (GPU2xx)."""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

import libcst as cst

from advisor.findings import Applicability, Severity
from advisor.model import CallSite, Context, FileModel
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import DATALOADER, dotted_name, is_none, root_name
from advisor.model.subtree import contains
from advisor.model.walk import children
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule
from advisor.rules.sync import _device_kind

_DTYPE_PREFIX = "torch."
_DTYPES = frozenset(
    "float16 float32 float64 bfloat16 half float double long int int8 int16 int32 int64 uint8 bool "
    "complex64 complex128 cfloat".split()
)


def _is_device_move(model: FileModel, site: CallSite) -> bool:
    if site.method == "cuda":
        return True
    if site.method != "to" or not site.node.args:
        return False
    first = site.node.args[0]
    if first.keyword is not None and first.keyword.value != "device":
        return False
    value = first.value
    if isinstance(value, cst.SimpleString):
        return "cpu" not in value.value
    qual = model.imports.qualify(value) or ""
    return not (qual.startswith(_DTYPE_PREFIX) and qual[len(_DTYPE_PREFIX):] in _DTYPES)


def _batch_names(site: CallSite) -> set:
    names: set = set()
    loop = site.ctx.loop
    while loop is not None:
        names |= loop.batch_names
        loop = loop.parent
    return names


def moves_batches_to_device(model: FileModel) -> bool:
    """Some loop copies its loop variables (or values derived from them) to a device,
    itself or by passing them to a function of the file that does (`to_device(batch, dev)`)."""
    movers = set()
    for site in model.method_calls("to", "cuda"):
        if not _is_device_move(model, site):
            continue
        if site.ctx.function is not None:
            movers.add(site.ctx.function.key)
        if site.ctx.loop is None:
            continue
        root = site.receiver
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if not isinstance(root, cst.Name):
            continue
        if root.value in _batch_names(site):
            return True
    for key in movers:
        for site in model.facts.calls_by_callee.get(key, ()):
            if site.ctx.loop is None:
                continue
            names = _batch_names(site)
            if any(root_name(arg.value) in names for arg in site.node.args):
                return True
    return False


def _built_on_device(model: FileModel, expr: cst.BaseExpression, site: CallSite, depth: int = 0) -> bool:
    """The expression makes or moves tensors onto a GPU (`.cuda()`, `.to(dev)`, `device="cuda"`)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "to") and node.args:
                first = node.args[0].value
                if not (isinstance(first, cst.SimpleString) and "cpu" in first.value):
                    return True
            if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
                return True
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "device":
                    value = arg.value
                    if not (isinstance(value, cst.SimpleString) and "cpu" in value.value):
                        return True
        if isinstance(node, cst.Name) and depth < 2:
            for assignment in model.assignments(node.value, site.ctx):
                if assignment.value is not None and _built_on_device(model, assignment.value, site, depth + 1):
                    return True
        elif not isinstance(node, cst.Name):
            stack.extend(children(node))
    return False


def _dataset_on_device(model: FileModel, site: CallSite) -> bool:
    """`DataLoader(TensorDataset(x_gpu, y_gpu))`: nothing to pin (pinning needs CPU tensors)."""
    arg = call_argument(site.node, "dataset", 0)
    if arg is None:
        return False
    dataset = arg.value
    if isinstance(dataset, cst.Name):
        found = model.assignments(dataset.value, site.ctx)
        if len(found) != 1 or found[0].value is None:
            return False
        dataset = found[0].value
    if not isinstance(dataset, cst.Call) or not (dotted_name(dataset.func) or "").endswith("TensorDataset"):
        return False
    return any(_built_on_device(model, a.value, site) for a in dataset.args)


def _kwargs_value(model: FileModel, site: CallSite, key: str) -> Tuple[str, Optional[cst.BaseExpression]]:
    """Looks ``key`` up in the call's `**kwargs`: ("absent" | "present" | "unknown", value)."""
    state = "absent"
    for arg in star_kwargs(site.node):
        name = dotted_name(arg.value)
        found = model.assignments(name, site.ctx) if name else []
        if len(found) != 1 or (site.ctx.scope, name) in model.facts.subscript_stores:
            return "unknown", None
        value = found[0].value
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if not isinstance(element, cst.DictElement):
                    return "unknown", None  # `{**base, ...}`
                if isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key:
                    return "present", element.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
            if value.args and any(a.keyword is None for a in value.args):
                return "unknown", None
            for a in value.args:
                if a.keyword is not None and a.keyword.value == key:
                    return "present", a.value
        else:
            return "unknown", None
        if any(s.receiver_name == name for s in model.method_calls("update", "setdefault")):
            return "unknown", None
    return state, None


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
    fixable = "safe (unsafe when `pin_memory=False` is explicit)"
    requires = (("DataLoader",), ("cuda",))

    VALID = [
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, pin_memory=True)
            for x, y in loader:
                x = x.cuda()
            """,
            note="already pinned",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32)
            for x, y in loader:
                out = model(x)
            """,
            note="CPU-only script",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            loader = DataLoader(ds, batch_size=32, pin_memory=torch.cuda.is_available())
            for x, y in loader:
                x = x.to(device)
            """,
            note="expression value",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            kwargs = {"num_workers": 4, "pin_memory": True}
            loader = DataLoader(ds, batch_size=32, **kwargs)
            for x, y in loader:
                x = x.to("cuda")
            """,
            note="kwargs dict carries it",
        ),
        Case(
            """
            import lightning as L
            from torch.utils.data import DataLoader

            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train_set, batch_size=64, num_workers=8)

            trainer = L.Trainer(accelerator="cuda", devices=1)
            """,
            note="Lightning moves batches itself",
        ),
        Case(
            """
            from accelerate import Accelerator
            from torch.utils.data import DataLoader
            accelerator = Accelerator()
            loader = DataLoader(ds, batch_size=16)
            model, opt, loader = accelerator.prepare(model, opt, loader)
            for batch in loader:
                loss = model(**batch).loss
                accelerator.backward(loss)
                opt.step()
            """,
            note="Accelerate places batches",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, 32, True, None, None, 4, None, True)
            for x, y in loader:
                x = x.cuda()
            """,
            note="positional pin_memory",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            X = torch.randn(1000, 10, device="cuda")
            Y = torch.randn(1000, 1).cuda()
            loader = DataLoader(TensorDataset(X, Y), batch_size=32, shuffle=True)
            for x, y in loader:
                x = x.to("cuda")
            """,
            note="dataset already on the GPU: nothing to pin",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, shuffle=True)  # expect: GPU201
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, shuffle=True, pin_memory=True)  # expect: GPU201
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
            """,
        ),
        Case(
            """
            import torch.utils.data as tud
            device = "cuda:0"
            train_loader = tud.DataLoader(  # expect: GPU201
                train_set,
                batch_size=64,
                num_workers=4,
            )
            for batch in train_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
            """,
            fixed="""
            import torch.utils.data as tud
            device = "cuda:0"
            train_loader = tud.DataLoader(  # expect: GPU201
                train_set,
                batch_size=64,
                num_workers=4, pin_memory=True,
            )
            for batch in train_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
            """,
            note="module alias, trailing comma",
        ),
        Case(
            """
            from torch.utils.data import DataLoader as DL
            import torch
            loader_kwargs = dict(batch_size=8, num_workers=2)
            loader = DL(ds, **loader_kwargs)  # expect: GPU201
            def train(loader, device):
                for x, y in loader:
                    x = x.to(device)
            train(loader, torch.device("cuda"))
            """,
            fixed="""
            from torch.utils.data import DataLoader as DL
            import torch
            loader_kwargs = dict(batch_size=8, num_workers=2)
            loader = DL(ds, **loader_kwargs, pin_memory=True)  # expect: GPU201
            def train(loader, device):
                for x, y in loader:
                    x = x.to(device)
            train(loader, torch.device("cuda"))
            """,
            note="kwargs dict without it",
        ),
        Case(
            """
            from torch.utils.data.dataloader import DataLoader
            loader = DataLoader(ds, batch_size=8, **cfg.loader_options)  # expect: GPU201 info
            for x, y in loader:
                x = x.cuda(non_blocking=True)
            """,
            note="unresolvable kwargs",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8, pin_memory=False)  # expect: GPU201
            for x, y in loader:
                x = x.cuda()
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=8, pin_memory=True)  # expect: GPU201
            for x, y in loader:
                x = x.cuda()
            """,
            note="explicit False",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            def make_loaders(train_ds, val_ds):
                train = DataLoader(train_ds, batch_size=64, shuffle=True)  # expect: GPU201
                val = DataLoader(val_ds, batch_size=64)  # expect: GPU201
                return train, val
            for images, labels in make_loaders(a, b)[0]:
                images = images.to("cuda", non_blocking=True)
            """,
            note="loaders built in a helper",
        ),
        Case(
            """
            import os
            from torch.utils.data import DataLoader
            device = f"cuda:{os.environ['LOCAL_RANK']}"
            loader = DataLoader(ds, batch_size=16, num_workers=4)  # expect: GPU201
            for x, y in loader:
                x, y = x.to(device), y.to(device)
            """,
            note="torchrun device string",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            def to_device(batch, device):
                return {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            loader = DataLoader(ds, batch_size=16, num_workers=4)  # expect: GPU201
            for batch in loader:
                batch = to_device(batch, torch.device("cuda"))
            """,
            note="moved by a helper",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.uses_cuda:
            return
        sites = model.calls_to(DATALOADER)
        if not sites or not moves_batches_to_device(model):
            return
        for site in sites:
            report = self._check_call(model, site)
            if report is not None:
                yield report

    def _check_call(self, model: FileModel, site: CallSite) -> Optional[Report]:
        call = site.node
        if _dataset_on_device(model, site):
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
                )
            return None
        if any(a.star == "*" for a in call.args):
            return self.report(call, "cannot tell whether this DataLoader pins memory", severity=Severity.INFO)
        state, value = _kwargs_value(model, site, "pin_memory")
        if state == "present":
            return None
        if state == "unknown":
            return self.report(
                call,
                "DataLoader options come from `**kwargs` that may not set `pin_memory=True`; "
                "its batches go to the GPU",
                severity=Severity.INFO,
            )
        fix = None
        if call.args:
            fix = FixSpec("add `pin_memory=True`", (NodeEdit(call.args[-1].value, ", pin_memory=True", "after"),))
        return self.report(
            call,
            "DataLoader without `pin_memory=True` while its batches go to the GPU: each copy is "
            "staged through pageable memory and blocks the host",
            fix=fix,
        )


# -- shared by GPU202-GPU205 ------------------------------------------------------------------

_ITERATION_WRAPPERS = frozenset(
    {"enumerate", "iter", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm"}
)
_EVAL_NAME = re.compile(
    r"(^|_)(val|valid|validation|test|testing|eval|evaluation|dev)(_|$|loader|dataloader|set|ds|dl|data)",
    re.IGNORECASE,
)
_TRAIN_NAME = re.compile(r"train", re.IGNORECASE)


def _literal_int(expr: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = expr.expression
        return -int(inner.evaluated_value) if isinstance(inner, cst.Integer) else None
    return None


def _loader_option(
    model: FileModel, site: CallSite, keyword: str, position: Optional[int]
) -> Tuple[str, Optional[cst.BaseExpression], Optional[cst.Arg]]:
    """A DataLoader argument given in the call or in a `**kwargs` dict of this file:
    ("present", value, arg-or-None) | ("absent", None, None) | ("unknown", None, None)."""
    arg = call_argument(site.node, keyword, position)
    if arg is not None:
        return "present", arg.value, arg
    if any(a.star == "*" for a in site.node.args):
        return "unknown", None, None
    state, value = _kwargs_value(model, site, keyword)
    return state, value, None


def _worker_count(model: FileModel, site: CallSite) -> Optional[int]:
    """`num_workers` as a literal (absent means 0); None when not known."""
    state, value, _ = _loader_option(model, site, "num_workers", 5)
    if state == "absent":
        return 0
    return _literal_int(value) if state == "present" else None


def _known_object(model: FileModel, expr: cst.BaseExpression, ctx) -> bool:
    """The value is an object for sure, never None: a class instantiated (`RandomSampler(ds)`),
    or a name bound only to such calls. A helper function may return None: not known."""
    if isinstance(expr, cst.Call):
        name = dotted_name(expr.func) or ""
        return name.rsplit(".", 1)[-1][:1].isupper()
    name = dotted_name(expr)
    if name is None:
        return False
    found = model.assignments(name, ctx)
    return bool(found) and all(
        a.value is not None and a.index is None and _known_object(model, a.value, a.ctx) for a in found
    )


def _dataset_value(model: FileModel, site: CallSite) -> Optional[cst.BaseExpression]:
    """The dataset argument, through one plain assignment (`ds = MyDataset(...)`)."""
    arg = call_argument(site.node, "dataset", 0)
    if arg is None:
        return None
    value = arg.value
    if isinstance(value, cst.Name):
        found = model.assignments(value.value, site.ctx)
        if len(found) != 1 or found[0].value is None or found[0].index is not None:
            return value
        value = found[0].value
    return value


def _iterable_dataset(model: FileModel, site: CallSite) -> bool:
    """The dataset is built from a class of this file that derives from `IterableDataset`."""
    value = _dataset_value(model, site)
    if not isinstance(value, cst.Call):
        return False
    name = dotted_name(value.func)
    seen = set()
    while name is not None and name not in seen:
        seen.add(name)
        info = model.facts.classes.get(name.rsplit(".", 1)[-1])
        if info is None:
            return False
        if any(base.rsplit(".", 1)[-1] == "IterableDataset" for base in info.bases):
            return True
        parents = [b for b in info.bases if b.rsplit(".", 1)[-1] in model.facts.classes]
        name = parents[0] if parents else None
    return False


def _cuda_in_loading(model: FileModel, site: CallSite) -> bool:
    """The dataset's `__getitem__`/`__iter__` or the `collate_fn` moves data to the GPU: worker
    processes could not do that, so the main process has to load."""
    keys = set()
    value = _dataset_value(model, site)
    if isinstance(value, cst.Call):
        name = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
        keys |= {f"{name}.__getitem__", f"{name}.__iter__", f"{name}.__getitems__"}
    collate = call_argument(site.node, "collate_fn", 6)
    if collate is not None:
        if isinstance(collate.value, cst.Lambda):
            return _built_on_device(model, collate.value.body, site)
        name = dotted_name(collate.value)
        if name is not None:
            keys.add(name.rsplit(".", 1)[-1] if name.startswith("self.") else name)
    if not keys:
        return False
    for move in model.method_calls("cuda", "to"):
        function = move.ctx.function
        if function is not None and (function.key in keys or function.node.name.value in keys):
            if _is_device_move(model, move):
                return True
    return False


def _in_memory_dataset(model: FileModel, site: CallSite) -> bool:
    value = _dataset_value(model, site)
    return isinstance(value, cst.Call) and (dotted_name(value.func) or "").endswith("TensorDataset")


def _local_call(model: FileModel, value: cst.BaseExpression) -> bool:
    """A call of a function defined in this file (`make_loaders(...)`)."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and model.imports.qualify(value.func) is None
        and value.func.value in model.facts.functions
    )


class _LoaderFlow:
    """Which `DataLoader(...)` calls an expression may hold: through names, tuple unpacking,
    helper returns, helper parameters (at their call sites) and iteration wrappers
    (`enumerate`, `tqdm`, `zip`). None whenever any path is not a DataLoader of this file
    (`accelerator.prepare(...)`, a loop variable, an argument from elsewhere)."""

    def __init__(self, model: FileModel) -> None:
        self.model = model
        self.sites = {id(s.node): s for s in model.calls_to(DATALOADER)}

    def loaders(self, expr: cst.BaseExpression, ctx, depth: int = 0, callers=None) -> Optional[list]:
        model = self.model
        if depth > 6:
            return None
        if isinstance(expr, cst.Call):
            qual = model.imports.qualify(expr.func)
            if qual == DATALOADER:
                site = self.sites.get(id(expr))
                return [site] if site is not None else None
            name = qual or dotted_name(expr.func)
            if name == "zip":
                out: list = []
                for arg in expr.args:
                    found = None if arg.star else self.loaders(arg.value, ctx, depth + 1, callers)
                    if found is None:
                        return None
                    out += found
                return out
            if name in _ITERATION_WRAPPERS and expr.args and not expr.args[0].star:
                return self.loaders(expr.args[0].value, ctx, depth + 1, callers)
            if _local_call(model, expr):
                return self._returned(expr, None, depth, callers)
            return None
        name = dotted_name(expr)
        if name is None:
            return None
        found = model.assignments(name, ctx)
        if found:
            out = []
            for assignment in found:
                value = assignment.value
                if value is None or assignment.augmented:
                    return None
                if assignment.index is not None:
                    if isinstance(value, (cst.Tuple, cst.List)) and assignment.index < len(value.elements):
                        value = value.elements[assignment.index].value
                    elif _local_call(model, value):
                        result = self._returned(value, assignment.index, depth, callers)
                        if result is None:
                            return None
                        out += result
                        continue
                    else:
                        return None
                result = self.loaders(value, assignment.ctx, depth + 1, callers)
                if result is None:
                    return None
                out += result
            return out
        info = ctx.function
        if info is None or name not in info.params:
            return None
        position = info.params.index(name) - (1 if info.class_name is not None else 0)
        sites = callers.get(info.key) if callers and info.key in callers else model.call_sites(info)
        if not sites:
            return None
        out = []
        for call in sites:
            arg = call_argument(call.node, name, position)
            result = None if arg is None else self.loaders(arg.value, call.ctx, depth + 1, callers)
            if result is None:
                return None
            out += result
        return out

    def _returned(self, call: cst.Call, index: Optional[int], depth: int, callers) -> Optional[list]:
        info = self.model.facts.functions[call.func.value]
        body = Context(function=info, class_name=info.class_name)
        if not info.returns:
            return None
        out: list = []
        for value in info.returns:
            if index is not None:
                if not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements):
                    return None
                value = value.elements[index].value
            result = self.loaders(value, body, depth + 1, callers)
            if result is None:
                return None
            out += result
        return out


def _drop_arg_edits(call: cst.Call, arg: cst.Arg) -> Tuple[NodeEdit, ...]:
    """Edits that remove one argument with its separator, keeping the layout (and the comments)
    of the others: an argument on a line of its own takes its line with it.

    A whitespace node that starts a new line also holds the block's indentation, so lines are
    removed whole (the newline and the indentation that follows it), never in part."""
    args = list(call.args)
    i = next(k for k, a in enumerate(args) if a is arg)
    last = i == len(args) - 1
    before = call.whitespace_before_args if i == 0 else args[i - 1].comma.whitespace_after
    edits = [NodeEdit(arg, "")]

    def drop(node: cst.CSTNode) -> None:
        if not (isinstance(node, cst.SimpleWhitespace) and not node.value):
            edits.append(NodeEdit(node, ""))

    def commented(node) -> bool:
        return isinstance(node, cst.ParenthesizedWhitespace) and node.first_line.comment is not None

    comma = arg.comma
    if isinstance(comma, cst.Comma):
        drop(comma)
        after = comma.whitespace_after
        own_line = isinstance(before, cst.ParenthesizedWhitespace)
        if commented(after):
            drop(after.first_line.whitespace)  # its comment stays, on a line of its own
        elif own_line and last and not commented(before):
            drop(before)  # `,\n    arg,\n)`: the line break before the argument goes
        elif own_line and isinstance(after, cst.ParenthesizedWhitespace):
            drop(after)  # the line break after it goes; the next line keeps its indentation
        elif isinstance(after, cst.SimpleWhitespace) and after.value and not last:
            drop(after)
        elif isinstance(before, cst.SimpleWhitespace):
            drop(before)
    elif i > 0:
        drop(args[i - 1].comma)
        if not commented(before):
            drop(before)
        elif isinstance(arg.whitespace_after_arg, cst.ParenthesizedWhitespace):
            drop(arg.whitespace_after_arg)
    return tuple(edits)


def _loop_is_one_epoch(loop) -> bool:
    node = loop.node
    if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call):
        return False
    call = node.iter
    return (
        isinstance(call.func, cst.Name)
        and call.func.value == "range"
        and len(call.args) == 1
        and _literal_int(call.args[0].value) is not None
        and _literal_int(call.args[0].value) <= 1
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
    nothing that says it trains (`shuffle=True`, a `train` in its names)."""
    labels = [_loader_label(model, site)]
    dataset = call_argument(site.node, "dataset", 0)
    if dataset is not None:
        labels.append(dotted_name(dataset.value) or "")
    shuffle = call_argument(site.node, "shuffle", 2)
    if shuffle is not None and literal_bool(shuffle.value) is True:
        return False
    if any(_TRAIN_NAME.search(label) for label in labels):
        return False
    return any(_EVAL_NAME.search(label.rsplit(".", 1)[-1]) for label in labels if label)


def _loader_uses(model: FileModel) -> dict:
    """For each DataLoader call that some `for` loop of the file iterates: "train" when a
    training loop does, else "eval"."""
    flow = _LoaderFlow(model)
    uses: dict = {}
    for loop in model.facts.loops:
        if not isinstance(loop.node, cst.For):
            continue
        training = model.is_training_loop(loop) or model.in_training_code(loop.ctx)
        for site in flow.loaders(loop.node.iter, loop.ctx) or ():
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
        device. Loaders named for validation or testing, in-memory `TensorDataset`s, datasets
        derived from `IterableDataset` (which shard their own streams), and frameworks that
        move batches themselves (Lightning, Accelerate, the Hugging Face `Trainer`) are left
        alone. A `**kwargs` dict that cannot be resolved lowers the finding to info; a
        `num_workers` given as a variable is trusted.
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
    requires = (("DataLoader",), ("cuda",))

    VALID = [
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, shuffle=True, num_workers=args.workers)
            for x, y in loader:
                x = x.cuda()
            """,
            note="num_workers from argparse",
        ),
        Case(
            """
            import torch.utils.data as tud
            loader_kwargs = {"batch_size": 64, "num_workers": 8, "pin_memory": True}
            loader = tud.DataLoader(train_set, shuffle=True, **loader_kwargs)
            for x, y in loader:
                x = x.to("cuda", non_blocking=True)
            """,
            note="kwargs dict carries it; module alias",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            X, Y = torch.randn(512, 8), torch.randn(512, 1)
            loader = DataLoader(TensorDataset(X, Y), batch_size=64, shuffle=True)
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
            """,
            note="in-memory TensorDataset: nothing to load",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, IterableDataset

            class TokenStream(IterableDataset):
                def __iter__(self):
                    yield from read_shards()

            class ShuffledStream(TokenStream):
                pass

            loader = DataLoader(ShuffledStream(), batch_size=16)
            for batch in loader:
                batch = batch.to("cuda")
            """,
            note="derived from IterableDataset",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)
            val_loader = DataLoader(val_set, batch_size=256)
            for x, y in train_loader:
                x = x.cuda()
            """,
            note="validation loader",
        ),
        Case(
            """
            import lightning as L
            from torch.utils.data import DataLoader

            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train_set, batch_size=64, shuffle=True)

            trainer = L.Trainer(accelerator="cuda", devices=1)
            """,
            note="Lightning moves batches itself",
        ),
        Case(
            """
            from accelerate import Accelerator
            from torch.utils.data import DataLoader
            accelerator = Accelerator()
            loader = DataLoader(ds, batch_size=16, shuffle=True)
            model, opt, loader = accelerator.prepare(model, opt, loader)
            for batch in loader:
                accelerator.backward(model(**batch).loss)
                opt.step()
            """,
            note="Accelerate places batches (and no CUDA text)",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32)
            for x, y in loader:
                out = model(x)
            """,
            note="CPU-only script",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader, Dataset

            class OnDevice(Dataset):
                def __init__(self, table):
                    self.table = table
                def __len__(self):
                    return len(self.table)
                def __getitem__(self, i):
                    return self.table[i].to("cuda")

            def gpu_collate(items):
                return torch.stack(items).cuda()

            a = DataLoader(OnDevice(rows), batch_size=64, shuffle=True)
            b = DataLoader(rows, batch_size=64, shuffle=True, collate_fn=gpu_collate)
            for x in a:
                x = x.cuda()
            """,
            note="the dataset or collate_fn uses CUDA: workers could not",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(images, batch_size=256)
            with torch.inference_mode():
                for x in loader:
                    preds.append(model(x.cuda()).argmax(1))
            """,
            note="only an inference loop iterates it",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(train_set, batch_size=32, shuffle=True)  # expect: GPU202
            for x, y in loader:
                x, y = x.cuda(), y.cuda()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
            """,
            note="no num_workers",
        ),
        Case(
            """
            import torch.utils.data as tud
            device = "cuda:0"
            train_loader = tud.DataLoader(  # expect: GPU202
                train_set,
                batch_size=64,
                num_workers=0,
            )
            for batch in train_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                model(**batch).loss.backward()
                optimizer.step()
            """,
            note="explicit zero, module alias",
        ),
        Case(
            """
            from torch.utils.data import DataLoader as DL
            import torch
            loader_kwargs = dict(batch_size=8, pin_memory=True)
            loader = DL(ds, **loader_kwargs)  # expect: GPU202
            def train(loader, device):
                for x, y in loader:
                    loss = model(x.to(device), y.to(device))
                    loss.backward()
                    opt.step()
            train(loader, torch.device("cuda"))
            """,
            note="kwargs dict without it",
        ),
        Case(
            """
            from torch.utils.data.dataloader import DataLoader
            loader = DataLoader(ds, batch_size=8, **cfg.loader_options)  # expect: GPU202 info
            for x, y in loader:
                loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
                loss.backward()
                optimizer.step()
            """,
            note="unresolvable kwargs",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(images, 64, True, None, None, 0, None, True)  # expect: GPU202
            for epoch in range(epochs):
                for x, y in loader:
                    loss = criterion(model(x.cuda(non_blocking=True)), y.cuda(non_blocking=True))
                    loss.backward()
                    optimizer.step()
            """,
            note="positional num_workers",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            def make_loaders(train_ds, val_ds):
                train = DataLoader(train_ds, batch_size=64, shuffle=True, pin_memory=True)  # expect: GPU202
                val = DataLoader(val_ds, batch_size=64, num_workers=4)
                return train, val
            def to_device(batch, device):
                return {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            def train_step(batch):
                model(**batch).loss.backward()
                optimizer.step()
            train_loader, val_loader = make_loaders(a, b)
            for batch in train_loader:
                train_step(to_device(batch, torch.device("cuda")))
            """,
            note="built in a helper, moved by a helper, trained by a helper",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            test_loader = DataLoader(test_set, batch_size=128)  # expect: GPU202
            for x, y in test_loader:
                loss = criterion(model(x.cuda()), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="a training loop iterates it, whatever its name",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.uses_cuda:
            return
        sites = model.calls_to(DATALOADER)
        if not sites or not moves_batches_to_device(model):
            return
        uses = _loader_uses(model)
        for site in sites:
            use = uses.get(id(site.node))
            if use == "eval" or (use is None and _eval_only(model, site)):
                continue
            if _in_memory_dataset(model, site) or _iterable_dataset(model, site):
                continue
            if _dataset_on_device(model, site) or _cuda_in_loading(model, site):
                continue
            state, value, _ = _loader_option(model, site, "num_workers", 5)
            if state == "unknown":
                yield self.report(
                    site.node,
                    "DataLoader options come from `**kwargs` that may not set `num_workers`: batches "
                    "may be loaded in the training process",
                    severity=Severity.INFO,
                )
            elif state == "absent" or _literal_int(value) == 0:
                yield self.report(
                    site.node,
                    "DataLoader loads every batch in the training process (no worker processes) while "
                    "the GPU waits",
                )


def _pinned(model: FileModel, site: CallSite) -> bool:
    """Built with a literal `pin_memory=True` (in the call or a `**kwargs` dict of this file)."""
    state, value, _ = _loader_option(model, site, "pin_memory", 7)
    return state == "present" and value is not None and literal_bool(value) is True


def _has_keyword(call: cst.Call, keyword: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword for a in call.args)


def _batch_part(model: FileModel, name: str, loop, site: CallSite) -> bool:
    """``name`` holds, where ``site`` reads it, a loop variable of ``loop`` or a piece of one
    (`x, y = batch`, `batch["x"]`), or a comprehension variable over one (`for k, v in batch.items()`)."""
    found = model.assignments(name, site.ctx)
    if not found:
        return name in loop.batch_names  # bound by a comprehension over the batch
    earlier = [a for a in found if a.order < site.order and a.ctx.scope == site.ctx.scope]
    # `x = x.to(device)` reads the previous `x`: skip the statement that holds the call.
    while earlier and earlier[-1].statement is not None and contains(earlier[-1].statement, site.node):
        earlier.pop()
    if not earlier:
        return False
    reaching = earlier[-1]
    if reaching.value is None:
        return reaching.ctx.loop is loop.ctx.loop and name in loop.targets
    value = reaching.value
    if reaching.index is not None and isinstance(value, (cst.Tuple, cst.List)):
        if reaching.index >= len(value.elements):
            return False
        value = value.elements[reaching.index].value
    while isinstance(value, (cst.Attribute, cst.Subscript)):
        value = value.value
    return isinstance(value, cst.Name) and value.value in loop.targets


def _first_arg(call: cst.Call) -> Optional[cst.BaseExpression]:
    arg = call_argument(call, "device", 0)
    return arg.value if arg is not None else None


def _plain_selection(expr: Optional[cst.BaseExpression]) -> bool:
    """A name, or items and attributes of it (`batch["x"]`, `batch.pixel_values`): no calls."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return isinstance(expr, cst.Name)


class BlockingCopyFromPinnedLoader(Rule):
    code = "GPU203"
    name = "blocking-copy-from-pinned-loader"
    summary = "batch from a pinned DataLoader copied to the GPU without `non_blocking=True`"
    what = """
        `.to(device)` or `.cuda()` without `non_blocking=True`, applied to a loop variable (or a
        piece of one: `batch["x"]`, `x, y = batch`) of a loop over a DataLoader built with a
        literal `pin_memory=True`. Only copies from the host to a device: `.cpu()`,
        `.to("cpu")` and dtype conversions are never reported.
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
    fixable = "safe"
    requires = (("DataLoader",), ("True",), (".to(", ".cuda("))  # pin_memory may be positional

    VALID = [
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4)
            for x, y in loader:
                x = x.cuda()
            """,
            note="pageable loader: little to gain",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
            for x, y in loader:
                x = x.to("cuda", non_blocking=True)
                y = y.to(torch.float16)
                model(x).mean().backward()
                preds = model(x).to("cpu")
                ys = y.cpu()
            """,
            note="already async; dtype conversion; copies to the host",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, pin_memory=torch.cuda.is_available())
            for x, y in loader:
                x = x.cuda()
            """,
            note="pin_memory is not a literal",
        ),
        Case(
            """
            from accelerate import Accelerator
            from torch.utils.data import DataLoader
            accelerator = Accelerator()
            loader = DataLoader(ds, batch_size=16, pin_memory=True)
            model, opt, loader = accelerator.prepare(model, opt, loader)
            for batch in loader:
                extra = batch["mask"].to(accelerator.device)
                accelerator.backward(model(**batch).loss)
                opt.step()
            """,
            note="the loop runs over what Accelerate returned",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            train_loader = DataLoader(train_set, batch_size=32, pin_memory=True, num_workers=4)
            for x, y in train_loader:
                x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
                out = model(x)
                out = out.to(device)
                weights = class_weights.to(device)
            """,
            note="values that are not the batch",
        ),
        Case(
            """
            import lightning as L
            from torch.utils.data import DataLoader

            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train_set, batch_size=64, num_workers=8, pin_memory=True)

            class Net(L.LightningModule):
                def training_step(self, batch, batch_idx):
                    x, y = batch
                    return self.loss(self(x.to(self.device)), y)
            """,
            note="Lightning: no loop of ours over the loader",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, pin_memory=True, num_workers=2)
            for x, y in loader:
                x = x.to(device, non_blocking=False)
                y = y.to(device, torch.long, True)
            """,
            note="explicit blocking choice; positional non_blocking",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            dtype = torch.bfloat16 if args.bf16 else torch.float32
            loader = DataLoader(ds, batch_size=32, pin_memory=True, num_workers=2)
            for batch in loader:
                x = batch["x"].to(dtype)
                y = batch["y"].float().to("cuda")
                z = batch["z"].to(x)
            """,
            note="dtype variable, a converted copy, another tensor's device",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.cuda(), y.to(device)  # expect: GPU203
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4, pin_memory=True)
            for x, y in loader:
                x, y = x.cuda(non_blocking=True), y.to(device, non_blocking=True)  # expect: GPU203
            """,
        ),
        Case(
            """
            import torch.utils.data as tud
            from tqdm import tqdm
            kwargs = {"num_workers": 8, "pin_memory": True}
            train_loader = tud.DataLoader(train_set, batch_size=64, **kwargs)
            pbar = tqdm(train_loader)
            for step, batch in enumerate(pbar):
                batch = {k: v.to(device) for k, v in batch.items()}  # expect: GPU203
            """,
            fixed="""
            import torch.utils.data as tud
            from tqdm import tqdm
            kwargs = {"num_workers": 8, "pin_memory": True}
            train_loader = tud.DataLoader(train_set, batch_size=64, **kwargs)
            pbar = tqdm(train_loader)
            for step, batch in enumerate(pbar):
                batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}  # expect: GPU203
            """,
            note="kwargs dict, tqdm and enumerate, dict comprehension",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            def train_epoch(model, loader, device):
                for images, labels in loader:
                    images = images.to(device)  # expect: GPU203
                    labels = labels.to(device=device, dtype=torch.long)  # expect: GPU203
                    loss = criterion(model(images), labels)
                    loss.backward()
                    optimizer.step()

            train_loader = DataLoader(train_set, batch_size=64, shuffle=True, pin_memory=True)
            for epoch in range(10):
                train_epoch(model, train_loader, "cuda")
            """,
            fixed="""
            from torch.utils.data import DataLoader
            def train_epoch(model, loader, device):
                for images, labels in loader:
                    images = images.to(device, non_blocking=True)  # expect: GPU203
                    labels = labels.to(device=device, dtype=torch.long, non_blocking=True)  # expect: GPU203
                    loss = criterion(model(images), labels)
                    loss.backward()
                    optimizer.step()

            train_loader = DataLoader(train_set, batch_size=64, shuffle=True, pin_memory=True)
            for epoch in range(10):
                train_epoch(model, train_loader, "cuda")
            """,
            note="loader passed to a helper",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, 32, True, None, None, 4, None, True)
            for batch in loader:
                inputs, targets = batch
                inputs = inputs.cuda(  # expect: GPU203
                    0,
                )
                mask = batch[2].cuda()  # expect: GPU203
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, 32, True, None, None, 4, None, True)
            for batch in loader:
                inputs, targets = batch
                inputs = inputs.cuda(  # expect: GPU203
                    0, non_blocking=True,
                )
                mask = batch[2].cuda(non_blocking=True)  # expect: GPU203
            """,
            note="positional pin_memory, unpacked and indexed batch",
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader
            def make_loaders():
                train = DataLoader(train_set, batch_size=64, num_workers=4, pin_memory=True)
                val = DataLoader(val_set, batch_size=64, num_workers=4, pin_memory=True)
                return train, val

            train_loader, val_loader = make_loaders()
            with torch.no_grad():
                for x, y in val_loader:
                    hits = model(x.cuda()).argmax(1) == y.cuda()  # expect: GPU203
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader
            def make_loaders():
                train = DataLoader(train_set, batch_size=64, num_workers=4, pin_memory=True)
                val = DataLoader(val_set, batch_size=64, num_workers=4, pin_memory=True)
                return train, val

            train_loader, val_loader = make_loaders()
            with torch.no_grad():
                for x, y in val_loader:
                    hits = model(x.cuda(non_blocking=True)).argmax(1) == y.cuda(non_blocking=True)  # expect: GPU203
            """,
            note="loaders returned by a helper; evaluation loop",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            labeled = DataLoader(a, batch_size=32, num_workers=4, pin_memory=True)
            unlabeled = DataLoader(b, batch_size=96, num_workers=4, pin_memory=True)
            for (x, y), u in zip(labeled, unlabeled):
                u = u.to(device)  # expect: GPU203
            """,
            fixed="""
            from torch.utils.data import DataLoader
            labeled = DataLoader(a, batch_size=32, num_workers=4, pin_memory=True)
            unlabeled = DataLoader(b, batch_size=96, num_workers=4, pin_memory=True)
            for (x, y), u in zip(labeled, unlabeled):
                u = u.to(device, non_blocking=True)  # expect: GPU203
            """,
            note="zip of two pinned loaders",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        flow = None
        pinned_loops: dict = {}
        for site in model.method_calls("to", "cuda"):
            call = site.node
            if not _is_device_move(model, site) or _has_keyword(call, "non_blocking"):
                continue
            if site.method == "to" and _device_kind(model, _first_arg(call), site.ctx) != "cuda":
                continue  # `.to(dtype)` spelled with a variable, `.to(other_tensor)`
            if not _plain_selection(site.receiver):
                continue  # `batch["x"].float().to(device)`: the copy is of a new, pageable tensor
            if any(a.star for a in call.args):
                continue
            positional = [a for a in call.args if a.keyword is None]
            if len(positional) >= (3 if site.method == "to" else 2):
                continue  # non_blocking given by position
            root = root_name(site.receiver) if site.receiver is not None else None
            if root is None:
                continue
            loop = site.ctx.loop
            while loop is not None:
                if root in loop.batch_names and isinstance(loop.node, cst.For):
                    break
                loop = loop.parent
            if loop is None or not _batch_part(model, root, loop, site):
                continue
            if id(loop) not in pinned_loops:
                flow = flow or _LoaderFlow(model)
                loaders = flow.loaders(loop.node.iter, loop.ctx)
                pinned_loops[id(loop)] = bool(loaders) and all(_pinned(model, s) for s in loaders)
            if not pinned_loops[id(loop)]:
                continue
            if call.args:
                edit = NodeEdit(call.args[-1].value, ", non_blocking=True", "after")
            else:
                edit = NodeEdit(call.whitespace_before_args, "non_blocking=True", "after")
            yield self.report(
                call,
                "copy of a pinned batch without `non_blocking=True`: the host waits for the transfer "
                "instead of queueing the next kernels",
                fix=FixSpec("add `non_blocking=True`", (edit,)),
            )


def _inside(loop, loop_ids) -> bool:
    while loop is not None:
        if id(loop) in loop_ids:
            return True
        loop = loop.parent
    return False


def _epoch_callers(model: FileModel, info, epoch_ids, depth: int = 0) -> Optional[dict]:
    """Call sites through which a function runs once per epoch: {function key: [call sites]}
    for the chain of helpers from an epoch loop down to ``info`` (None when none does)."""
    if info is None or depth > 2:
        return None
    chosen = []
    chains: dict = {}
    for site in model.call_sites(info):
        if _inside(site.ctx.loop, epoch_ids):
            chosen.append(site)
        elif site.ctx.loop is None and site.ctx.function is not None:
            outer = _epoch_callers(model, site.ctx.function, epoch_ids, depth + 1)
            if outer:
                chosen.append(site)
                chains.update(outer)
    if not chosen:
        return None
    chains[info.key] = chosen
    return chains


class WorkersRestartedEveryEpoch(Rule):
    code = "GPU204"
    name = "workers-restarted-every-epoch"
    summary = "DataLoader with workers iterated every epoch without `persistent_workers=True`"
    what = """
        A `DataLoader(...)` with a literal `num_workers` above 0 (in the call or in a `**kwargs`
        dict of the file) and no `persistent_workers`, iterated inside an epoch loop (a loop
        that runs a whole training loop per iteration), directly or through a helper that the
        epoch loop calls; or built inside the epoch loop. One-epoch scripts are left alone.
    """
    why = """
        Each `for batch in loader` starts the worker processes afresh and shuts them down at
        the end of the pass. Every epoch then pays for starting processes, copying or
        re-importing the dataset into them, and refilling the prefetch queue, while the GPU
        waits for the first batches; with the `spawn` start method this can take seconds.
        Persistent workers are started once and kept between passes.
    """
    example = """
        loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8)
        for epoch in range(epochs):
            for x, y in loader:
                train_step(x, y)
    """
    instead = """
        loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True)
        for epoch in range(epochs):
            for x, y in loader:
                train_step(x, y)
    """
    hint = (
        "pass `persistent_workers=True` (not when the dataset changes between epochs: persistent "
        "workers keep their own copy)"
    )
    fixable = "unsafe (a dataset changed between epochs stays stale in persistent workers)"
    requires = (("DataLoader",), ("backward", ".step("), ("cuda",))

    VALID = [
        Case(
            """
            import torch.distributed as dist
            from torch.utils.data import DataLoader
            dist.init_process_group("gloo")
            loader = DataLoader(ds, batch_size=32, num_workers=2)
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
            """,
            note="CPU-only training",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4, persistent_workers=True)
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            note="already persistent",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4)
            for x, y in loader:
                loss = model(x.cuda(), y.cuda())
                loss.backward()
                optimizer.step()
            """,
            note="a single pass",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=args.workers)
            for epoch in range(args.epochs):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            note="worker count from argparse (may be 0)",
        ),
        Case(
            """
            import torch.utils.data as tud
            loader_kwargs = {"num_workers": 8, "persistent_workers": True, "pin_memory": True}
            loader = tud.DataLoader(ds, batch_size=32, **loader_kwargs)
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            note="kwargs dict carries it; module alias",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4)
            for epoch in range(1):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            note="one epoch",
        ),
        Case(
            """
            from accelerate import Accelerator
            from torch.utils.data import DataLoader
            accelerator = Accelerator(device_placement=True)  # places batches on cuda
            loader = DataLoader(ds, batch_size=16, num_workers=4)
            model, opt, loader = accelerator.prepare(model, opt, loader)
            for epoch in range(3):
                for batch in loader:
                    accelerator.backward(model(**batch).loss)
                    opt.step()
            """,
            note="the loop runs over what Accelerate returned",
        ),
        Case(
            """
            import lightning as L
            from torch.utils.data import DataLoader

            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    return DataLoader(self.train_set, batch_size=64, num_workers=8)

            trainer = L.Trainer(accelerator="cuda", max_epochs=10)
            trainer.fit(model, datamodule=Data())
            """,
            note="Lightning owns the epoch loop",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4, persistent_workers=False)
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            note="explicitly not persistent: the author's choice",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4)  # expect: GPU204
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4, persistent_workers=True)  # expect: GPU204
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
        ),
        Case(
            """
            import torch
            from torch.utils.data import DataLoader

            def train_one_epoch(model, loader, optimizer):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()

            @torch.no_grad()
            def evaluate(model, loader):
                return sum(model(x.cuda(), y.cuda()) for x, y in loader)

            def main():
                train_loader = DataLoader(train_set, 64, num_workers=8)  # expect: GPU204
                val_loader = DataLoader(val_set, 256, num_workers=4)  # expect: GPU204
                for epoch in range(args.epochs):
                    train_one_epoch(model, train_loader, optimizer)
                    evaluate(model, val_loader)
            """,
            fixed="""
            import torch
            from torch.utils.data import DataLoader

            def train_one_epoch(model, loader, optimizer):
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()

            @torch.no_grad()
            def evaluate(model, loader):
                return sum(model(x.cuda(), y.cuda()) for x, y in loader)

            def main():
                train_loader = DataLoader(train_set, 64, num_workers=8, persistent_workers=True)  # expect: GPU204
                val_loader = DataLoader(val_set, 256, num_workers=4, persistent_workers=True)  # expect: GPU204
                for epoch in range(args.epochs):
                    train_one_epoch(model, train_loader, optimizer)
                    evaluate(model, val_loader)
            """,
            note="iterated by helpers the epoch loop calls (a generator counts as a pass)",
        ),
        Case(
            """
            import torch.utils.data as tud
            loader_kwargs = dict(batch_size=128, num_workers=6, pin_memory=True)
            loader = tud.DataLoader(ds, shuffle=True, **loader_kwargs)  # expect: GPU204
            step = 0
            while step < max_steps:
                for i, (x, y) in enumerate(loader):
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
                    step += 1
            """,
            fixed="""
            import torch.utils.data as tud
            loader_kwargs = dict(batch_size=128, num_workers=6, pin_memory=True)
            loader = tud.DataLoader(ds, shuffle=True, **loader_kwargs, persistent_workers=True)  # expect: GPU204
            step = 0
            while step < max_steps:
                for i, (x, y) in enumerate(loader):
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
                    step += 1
            """,
            note="worker count in a kwargs dict; a while loop of passes",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            for epoch in range(epochs):
                loader = DataLoader(ds, batch_size=32, num_workers=4)  # expect: GPU204
                for x, y in loader:
                    loss = model(x.cuda(), y.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            note="rebuilt every epoch: no automatic fix, the loader has to move out of the loop",
        ),
        Case(
            """
            from torch.utils.data import DataLoader as DL

            class Trainer:
                def __init__(self, cfg):
                    self.train_loader = DL(cfg.train_set, 32, num_workers=4)  # expect: GPU204

                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.train_epoch()

                def train_epoch(self):
                    for x, y in self.train_loader:
                        loss = self.model(x.cuda(), y.cuda())
                        loss.backward()
                        self.optimizer.step()
            """,
            fixed="""
            from torch.utils.data import DataLoader as DL

            class Trainer:
                def __init__(self, cfg):
                    self.train_loader = DL(cfg.train_set, 32, num_workers=4, persistent_workers=True)  # expect: GPU204

                def fit(self, epochs):
                    for epoch in range(epochs):
                        self.train_epoch()

                def train_epoch(self):
                    for x, y in self.train_loader:
                        loss = self.model(x.cuda(), y.cuda())
                        loss.backward()
                        self.optimizer.step()
            """,
            note="a trainer class: attribute loader, method per epoch",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            labeled = DataLoader(a, 32, True, None, None, 4)  # expect: GPU204
            unlabeled = DataLoader(b, batch_size=96, num_workers=4, persistent_workers=True)
            for epoch in range(100):
                for (x, y), u in zip(labeled, unlabeled):
                    loss = model(x.cuda(), y.cuda(), u.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            fixed="""
            from torch.utils.data import DataLoader
            labeled = DataLoader(a, 32, True, None, None, 4, persistent_workers=True)  # expect: GPU204
            unlabeled = DataLoader(b, batch_size=96, num_workers=4, persistent_workers=True)
            for epoch in range(100):
                for (x, y), u in zip(labeled, unlabeled):
                    loss = model(x.cuda(), y.cuda(), u.cuda())
                    loss.backward()
                    optimizer.step()
            """,
            note="positional worker count, zip of two loaders",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        if not model.uses_cuda:
            return  # like every input-pipeline rule: only where a GPU waits for the batches
        epochs = {id(loop) for loop in model.epoch_loops() if not _loop_is_one_epoch(loop)}
        if not epochs:
            return
        flow = _LoaderFlow(model)
        iterated: dict = {}
        for loop in model.facts.loops:
            if not isinstance(loop.node, cst.For):
                continue
            loaders = None
            if _inside(loop.parent, epochs):
                loaders = flow.loaders(loop.node.iter, loop.ctx)
            elif loop.parent is None and loop.function is not None:
                callers = _epoch_callers(model, loop.function, epochs)
                if callers:
                    loaders = flow.loaders(loop.node.iter, loop.ctx, callers=callers)
            for site in loaders or ():
                iterated[id(site.node)] = site
        for comp in self._generator_passes(model, epochs, flow):
            iterated[id(comp.node)] = comp
        for site in model.calls_to(DATALOADER):
            rebuilt = _inside(site.ctx.loop, epochs) or (
                site.ctx.loop is None and _epoch_callers(model, site.ctx.function, epochs) is not None
            )
            if id(site.node) not in iterated and not rebuilt:
                continue
            workers = _worker_count(model, site)
            if workers is None or workers <= 0:
                continue
            state, _, _ = _loader_option(model, site, "persistent_workers", None)
            if state != "absent":
                continue
            if rebuilt:
                yield self.report(
                    site.node,
                    "DataLoader with worker processes is built anew every epoch: its workers start "
                    "over each time",
                    fix=None,
                )
                continue
            fix = None
            if site.node.args:
                fix = FixSpec(
                    "add `persistent_workers=True`",
                    (NodeEdit(site.node.args[-1].value, ", persistent_workers=True", "after"),),
                    Applicability.UNSAFE,
                )
            yield self.report(
                site.node,
                f"DataLoader starts {workers} worker process{'es' if workers != 1 else ''} again for every "
                "epoch: no `persistent_workers=True`",
                fix=fix,
            )

    def _generator_passes(self, model: FileModel, epochs, flow: _LoaderFlow) -> Iterator[CallSite]:
        """Comprehensions over a loader in a function the epoch loop calls (`sum(... for x in loader)`):
        the walk records no loop for them, so the function's own body is searched."""
        for info in model.facts.functions.values():
            callers = _epoch_callers(model, info, epochs)
            if not callers:
                continue  # only the bodies of functions run once per epoch are searched
            body = Context(function=info, class_name=info.class_name)
            for node in _comprehension_iters(info.node.body):
                yield from flow.loaders(node, body, callers=callers) or ()


def _comprehension_iters(body: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.CompFor):
            yield node.iter
        stack.extend(children(node))


class InvalidDataLoaderArguments(Rule):
    code = "GPU205"
    name = "invalid-dataloader-arguments"
    severity = Severity.ERROR
    summary = "DataLoader arguments that raise `ValueError` when the loader is built"
    what = """
        Literal argument combinations that `DataLoader.__init__` rejects: `prefetch_factor`
        or `persistent_workers=True` without worker processes (`num_workers` absent or 0);
        `shuffle=True` together with a `sampler`; `batch_sampler` together with `batch_size`
        (other than 1), `shuffle=True`, `sampler` or `drop_last=True`; `shuffle=True` for a
        dataset derived from `IterableDataset`; a negative `num_workers`. Values given as
        variables, and samplers that may be `None`, are not judged.
    """
    why = """
        These raise as soon as the script builds the loader, often only on the path that was
        not tried locally (a `--workers 0` debug run, the distributed branch that adds a
        sampler), after the model and data have already been loaded.
    """
    example = """
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=64, shuffle=True, sampler=sampler)
    """
    instead = """
        sampler = DistributedSampler(train_set)  # shuffles itself (shuffle=True is its default)
        loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    """
    hint = "drop the conflicting argument: the sampler or batch sampler decides order and batch size"
    fixable = "sometimes (safe: drops the conflicting keyword)"
    requires = (("DataLoader",),)  # shuffle, sampler and num_workers may all be positional

    VALID = [
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(ds) if distributed else None
            loader = DataLoader(ds, batch_size=32, shuffle=(sampler is None), sampler=sampler)
            """,
            note="the usual guarded sampler",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, num_workers=4, prefetch_factor=4, persistent_workers=True)
            """,
            note="workers present",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(
                ds,
                batch_size=32,
                num_workers=args.workers,
                persistent_workers=args.workers > 0,
                prefetch_factor=2 if args.workers else None,
            )
            """,
            note="values from argparse",
        ),
        Case(
            """
            import torch.utils.data as tud
            kw = {"num_workers": 4, "pin_memory": True}
            loader = tud.DataLoader(ds, batch_size=32, persistent_workers=True, **kw)
            loader2 = tud.DataLoader(ds, batch_size=32, persistent_workers=True, **cfg.loader)
            """,
            note="workers in a kwargs dict; unresolvable kwargs",
        ),
        Case(
            """
            from torch.utils.data import BatchSampler, DataLoader, RandomSampler
            batches = BatchSampler(RandomSampler(ds), batch_size=64, drop_last=True)
            loader = DataLoader(ds, batch_sampler=batches, num_workers=4)
            one = DataLoader(ds, batch_size=1, batch_sampler=batches)
            """,
            note="batch_sampler alone (or with the default batch size)",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(ds, batch_size=32, shuffle=False, sampler=my_sampler, prefetch_factor=None)
            """,
            note="shuffle=False with a sampler; prefetch_factor=None",
        ),
        Case(
            """
            import lightning as L
            from torch.utils.data import DataLoader

            class Data(L.LightningDataModule):
                def train_dataloader(self):
                    sampler = self.sampler
                    return DataLoader(self.ds, batch_size=64, shuffle=sampler is None, sampler=sampler)
            """,
            note="Lightning data module with an expression for shuffle",
        ),
    ]
    INVALID = [
        Case(
            """
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(train_set)
            loader = DataLoader(train_set, batch_size=64, shuffle=True, sampler=sampler)  # expect: GPU205
            """,
            fixed="""
            from torch.utils.data import DataLoader, DistributedSampler
            sampler = DistributedSampler(train_set)
            loader = DataLoader(train_set, batch_size=64, sampler=sampler)  # expect: GPU205
            """,
            note="shuffle next to a sampler",
        ),
        Case(
            """
            from torch.utils.data import DataLoader
            loader = DataLoader(
                ds,
                batch_size=32,
                num_workers=0,
                persistent_workers=True,  # expect: GPU205
            )
            """,
            fixed="""
            from torch.utils.data import DataLoader
            loader = DataLoader(
                ds,
                batch_size=32,
                num_workers=0,
                # expect: GPU205
            )
            """,
            note="persistent workers without workers (its comment stays)",
        ),
        Case(
            """
            import torch.utils.data as tud
            loader = tud.DataLoader(ds, batch_size=32, prefetch_factor=4)  # expect: GPU205
            """,
            fixed="""
            import torch.utils.data as tud
            loader = tud.DataLoader(ds, batch_size=32)  # expect: GPU205
            """,
            note="prefetch_factor with no num_workers",
        ),
        Case(
            """
            from torch.utils.data import BatchSampler, DataLoader, SequentialSampler
            batches = BatchSampler(SequentialSampler(ds), batch_size=64, drop_last=False)
            loader = DataLoader(ds, batch_size=64, batch_sampler=batches)  # expect: GPU205
            """,
            fixed="""
            from torch.utils.data import BatchSampler, DataLoader, SequentialSampler
            batches = BatchSampler(SequentialSampler(ds), batch_size=64, drop_last=False)
            loader = DataLoader(ds, batch_sampler=batches)  # expect: GPU205
            """,
            note="batch_size next to a batch_sampler",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, RandomSampler
            loader = DataLoader(
                ds,
                batch_sampler=BucketBatchSampler(ds, max_tokens=4096),
                drop_last=True,  # expect: GPU205
                sampler=RandomSampler(ds),  # expect: GPU205
            )
            """,
            note="drop_last and sampler next to a batch_sampler; the sampler conflict has no automatic fix",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, IterableDataset

            class Shards(IterableDataset):
                def __iter__(self):
                    yield from range(10)

            loader = DataLoader(Shards(), batch_size=8, shuffle=True)  # expect: GPU205
            workers = DataLoader(Shards(), batch_size=8, num_workers=-1)  # expect: GPU205
            """,
            note="shuffle for an IterableDataset; negative worker count",
        ),
        Case(
            """
            from torch.utils.data import DataLoader, RandomSampler
            from torch.utils.data.distributed import DistributedSampler
            loader = DataLoader(ds, 64, True, DistributedSampler(ds))  # expect: GPU205
            """,
            fixed="""
            from torch.utils.data import DataLoader, RandomSampler
            from torch.utils.data.distributed import DistributedSampler
            loader = DataLoader(ds, 64, False, DistributedSampler(ds))  # expect: GPU205
            """,
            note="positional shuffle becomes False",
        ),
    ]

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.calls_to(DATALOADER):
            if any(a.star == "*" for a in site.node.args):
                continue  # positions unknown
            yield from self._check_call(model, site)

    def _check_call(self, model: FileModel, site: CallSite) -> Iterator[Report]:
        call = site.node
        state, workers_value, workers_arg = _loader_option(model, site, "num_workers", 5)
        workers = 0 if state == "absent" else (_literal_int(workers_value) if state == "present" else None)
        if workers is not None and workers < 0 and workers_arg is not None:
            yield self.report(workers_arg, "`num_workers` must not be negative: DataLoader raises `ValueError`")
        if workers == 0:
            prefetch = call_argument(call, "prefetch_factor", None)
            value = _literal_int(prefetch.value) if prefetch is not None else None
            if value is not None and not (model.torch_version < (2, 0) and value == 2):
                yield self._drop(
                    call,
                    prefetch,
                    "`prefetch_factor` needs worker processes (`num_workers` > 0): DataLoader raises `ValueError`",
                )
            persistent = call_argument(call, "persistent_workers", None)
            if persistent is not None and literal_bool(persistent.value) is True:
                yield self._drop(
                    call,
                    persistent,
                    "`persistent_workers=True` needs `num_workers` > 0: DataLoader raises `ValueError`",
                )
        shuffle = call_argument(call, "shuffle", 2)
        shuffles = shuffle is not None and literal_bool(shuffle.value) is True
        sampler = call_argument(call, "sampler", 3)
        has_sampler = sampler is not None and _known_object(model, sampler.value, site.ctx)
        batch_sampler = call_argument(call, "batch_sampler", 4)
        if batch_sampler is not None and _known_object(model, batch_sampler.value, site.ctx):
            reason = "is mutually exclusive with `batch_sampler`: DataLoader raises `ValueError`"
            size = call_argument(call, "batch_size", 1)
            if size is not None and (is_none(size.value) or (_literal_int(size.value) not in (None, 1))):
                yield self._drop(call, size, f"`batch_size` {reason}")
            if shuffles:
                yield self._drop(call, shuffle, f"`shuffle=True` {reason}")
            if has_sampler:
                yield self.report(sampler, f"`sampler` {reason}")
            drop_last = call_argument(call, "drop_last", 8)
            if drop_last is not None and literal_bool(drop_last.value) is True:
                yield self._drop(call, drop_last, f"`drop_last=True` {reason}")
        elif shuffles and has_sampler:
            yield self._drop(call, shuffle, "`shuffle=True` with a `sampler`: DataLoader raises `ValueError`")
        elif shuffles and _iterable_dataset(model, site):
            yield self._drop(call, shuffle, "`shuffle=True` for an `IterableDataset`: DataLoader raises `ValueError`")

    def _drop(self, call: cst.Call, arg: cst.Arg, message: str) -> Report:
        if arg.keyword is not None:
            fix = FixSpec(f"remove `{arg.keyword.value}=`", _drop_arg_edits(call, arg))
        elif literal_bool(arg.value) is True:
            fix = FixSpec("pass `False`", (NodeEdit(arg.value, "False"),))
        else:
            fix = None
        return self.report(arg, message, fix=fix)
