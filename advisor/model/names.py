"""Dotted names, the module's import-alias table, and the canonical spelling of torch APIs.

libcst's QualifiedNameProvider answers the same question for module-level imports, but it costs
several times a bare parse; a table filled while walking the tree gives the answers we need.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set

import libcst as cst

# Several public spellings name the same object; rules compare against the right-hand side.
_CANONICAL: Dict[str, str] = {
    "torch.utils.data.dataloader.DataLoader": "torch.utils.data.DataLoader",
    "torch.utils.data.distributed.DistributedSampler": "torch.utils.data.DistributedSampler",
    "torch.utils.data.sampler.BatchSampler": "torch.utils.data.BatchSampler",
    "torch.nn.parallel.distributed.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.DataParallel": "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel": "torch.nn.parallel.DataParallel",
    "torch.GradScaler": "torch.amp.GradScaler",
    "torch.amp.grad_scaler.GradScaler": "torch.amp.GradScaler",
    "torch.cuda.amp.GradScaler": "torch.amp.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler": "torch.amp.GradScaler",
    "torch.amp.autocast": "torch.autocast",
    "torch.amp.autocast_mode.autocast": "torch.autocast",
    "torch.cuda.amp.autocast_mode.autocast": "torch.cuda.amp.autocast",
    "torch.cpu.amp.autocast_mode.autocast": "torch.cpu.amp.autocast",
    "torch.half": "torch.float16",
    "torch.float": "torch.float32",
    "torch.autograd.grad_mode.no_grad": "torch.no_grad",
    "torch.autograd.grad_mode.inference_mode": "torch.inference_mode",
    "torch.autograd.no_grad": "torch.no_grad",
    "torch.autograd.inference_mode": "torch.inference_mode",
}

DATALOADER = "torch.utils.data.DataLoader"
DISTRIBUTED_SAMPLER = "torch.utils.data.DistributedSampler"
BATCH_SAMPLER = "torch.utils.data.BatchSampler"
DDP_WRAPPERS = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.DataParallel"})
GRAD_SCALER = "torch.amp.GradScaler"
# Library classes whose instances scale a loss with a GradScaler (or apex's amp) when called with
# it and the optimizer: `loss_scaler = NativeScaler()`, then `loss_scaler(loss, optimizer)`.
LIBRARY_LOSS_SCALERS = frozenset({
    "timm.utils.NativeScaler", "timm.utils.cuda.NativeScaler", "timm.utils.ApexScaler", "timm.utils.cuda.ApexScaler",
})
NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode"})
_NAME, _ATTRIBUTE = cst.Name, cst.Attribute


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a chain of Name/Attribute nodes, else None."""
    # Exact type checks: this runs for most nodes of a file, and isinstance on libcst's
    # abstract node classes costs several times more (nothing subclasses Name or Attribute).
    kind = type(node)
    if kind is _NAME:
        return node.value
    parts = []
    while kind is _ATTRIBUTE:
        parts.append(node.attr.value)
        node = node.value
        kind = type(node)
    if kind is not _NAME:
        return None
    parts.append(node.value)
    parts.reverse()
    return ".".join(parts)


def last_segment(name: Optional[str]) -> str:
    """`model` in `self.model`; "" for None."""
    return (name or "").rsplit(".", 1)[-1]


def is_none(expr: Optional[cst.BaseExpression]) -> bool:
    return type(expr) is cst.Name and expr.value == "None"


# The old autograd wrapper, which hands back the tensor it wraps.
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def variable_inner(model, expr: cst.BaseExpression) -> cst.BaseExpression:
    """`x` for `Variable(x)` (also nested), else ``expr`` itself."""
    while (type(expr) is cst.Call and expr.args and expr.args[0].keyword is None and not expr.args[0].star
           and model.imports.qualify(expr.func) in VARIABLE):
        expr = expr.args[0].value
    return expr


def root_name(node: cst.BaseExpression) -> Optional[str]:
    """The leftmost Name of an attribute/subscript/call chain (``batch`` in ``batch["x"].to(d)``)."""
    while True:
        if type(node) is cst.Name:
            return node.value
        if type(node) in (cst.Attribute, cst.Subscript):
            node = node.value
        elif type(node) is cst.Call:
            node = node.func
        else:
            return None


# The names a star-imported module usually binds its own imports to.
_STAR_CONVENTIONS = {
    "torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "optim": "torch.optim",
    "dist": "torch.distributed", "np": "numpy",
}


class ImportTable:
    """Local names bound by import statements, mapped to what they import."""

    def __init__(self) -> None:
        self.aliases: Dict[str, str] = {}
        self.modules: set = set()  # top-level packages imported anywhere (torch, lightning, ...)
        # Every target each local name is imported as: `aliases` keeps the last one, and a
        # `try: from torch.amp import autocast / except ImportError: from torch.cuda.amp import
        # autocast` fallback binds one name to two.
        self.targets: Dict[str, Set[str]] = {}
        self.star = False  # `from utils import *`: names the file never imports may come from there
        self.star_modules: List[str] = []  # those modules (`utils`, `.helpers`), in import order
        # The project's answer for a name imported from one of its modules that only re-imports
        # it from a library (`from dataset import DataLoader`, whose `dataset.py` has it from
        # `torch.utils.data`): set where the file is read in a project (project/view.py).
        self.reexports: Optional[Callable[[str], Optional[str]]] = None
        self._reexported: Dict[str, str] = {}

    def _bind(self, local: str, target: str) -> None:
        self.aliases[local] = target
        self.targets.setdefault(local, set()).add(target)

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            self.modules.add(full.split(".")[0])
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                self._bind(alias.asname.name.value, full)
            else:
                top = full.split(".")[0]
                self._bind(top, top)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative:
            self._add_relative(node)
            return
        if node.module is None:
            return
        module = dotted_name(node.module)
        if module is None:
            return
        self.modules.add(module.split(".")[0])
        if type(node.names) is cst.ImportStar:
            self.star = True
            self.star_modules.append(module)
            return
        for alias in node.names:
            if not type(alias.name) is cst.Name:
                continue
            local = alias.name.value
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
            self._bind(local, f"{module}.{alias.name.value}")

    def _add_relative(self, node: cst.ImportFrom) -> None:
        """`from .losses import BoxLoss` binds `BoxLoss` to ".losses.BoxLoss": the leading dots
        say how many package levels up the project's own module is (see advisor/project)."""
        if type(node.names) is cst.ImportStar:
            self.star = True
            module = dotted_name(node.module) if node.module is not None else ""
            if module is not None:
                self.star_modules.append("." * len(node.relative) + module)
            return
        dots = "." * len(node.relative)
        module = dotted_name(node.module) if node.module is not None else ""
        if module is None:
            return
        prefix = f"{dots}{module}." if module else dots
        for alias in node.names:
            if not type(alias.name) is cst.Name:
                continue
            local = alias.name.value
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
            self._bind(local, f"{prefix}{alias.name.value}")

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """The canonical qualified name of an expression that names an imported object."""
        dotted = dotted_name(node)
        return None if dotted is None else self.qualify_dotted(dotted)

    def qualify_dotted(self, dotted: str) -> Optional[str]:
        """`qualify` for a dotted name given as text."""
        head, _, rest = dotted.partition(".")
        target = self.aliases.get(head)
        if target is None:
            if not self.star:
                return None
            # A star import (`from utils import *`, whose module imports torch) brings the
            # modules that module imports: a file that never imports `torch` yet calls
            # `torch.zeros` has it from there, under the usual names.
            target = _STAR_CONVENTIONS.get(head)
            if target is None:
                return None
        full = f"{target}.{rest}" if rest else target
        while full.startswith("torch.torch."):
            full = full[len("torch."):]  # `torch.torch.rand(n)`: the package holds itself
        if self.reexports is not None and head not in self.modules:
            # Imported from a module (`from dataset import DataLoader`), not a package itself.
            known = self._reexported.get(full)
            if known is None:
                known = self._reexported[full] = self.reexports(full) or full
            full = known
        return _CANONICAL.get(full, full)

    def forget_reexports(self) -> None:
        self._reexported = {}

    def imported_once(self, name: str) -> bool:
        """Every import of ``name`` in the file binds it to the same object."""
        return len(self.targets.get(name, ())) == 1

    def imports_any(self, *packages: str) -> bool:
        return any(p in self.modules for p in packages)


def is_main_test(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not type(test) is cst.Comparison or len(test.comparisons) != 1:
        return False
    part = test.comparisons[0]
    if not type(part.operator) is cst.Equal:
        return False
    sides = (test.left, part.comparator)
    return any(type(x) is cst.Name and x.value == "__name__" for x in sides) and any(
        type(x) is cst.SimpleString and x.evaluated_value == "__main__" for x in sides
    )
