"""The input pipeline: how batches reach the GPU (GPU2xx)."""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

import libcst as cst

from advisor.findings import Applicability, Severity
from advisor.model import CallSite, FileModel
from advisor.model.file_model import call_argument, literal_bool, star_kwargs
from advisor.model.names import DATALOADER, dotted_name
from advisor.rules.base import Case, FixSpec, NodeEdit, Report, Rule

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
            if any(_root(arg.value) in names for arg in site.node.args):
                return True
    return False


def _root(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return expr.value if isinstance(expr, cst.Name) else None


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
            stack.extend(c for c in node.children if isinstance(c, cst.CSTNode))
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
