"""Files that cannot be imported as they stand. Python stops at the import, every time, so what
the rest of the file would cost is not what the project's runs cost. Two shapes:

- a top-level `from .trainer_utils import X` whose module is missing from the file's folder: a
  copy vendored from a library (a Hugging Face `trainer.py` dropped into a training repository);
  so is a plain script's `from data.config import Option` where the package `data/` beside it
  has no `config` (a stale script kept after the module moved).
  Read from the text, so that the project view can make the missing paths dependencies of the
  file's cached result (a path that does not exist keeps the result out of the cache: adding the
  module changes the answer at once);
- a top-level `from utils import progress_bar` where the project's `utils.py` beside the script
  binds no such name: a stale script kept after the helper it needs was removed. The module
  read is one of the file's imports, so it is among the dependencies of its cached result.
  Only where the module Python loads is certain: a relative import, or a script in a folder
  that is no package and does not edit `sys.path`, importing a module that lies beside it. A
  module that can bind names out of sight (`import *`, a module `__getattr__`, `globals()`,
  `exec`, `setattr`) is taken to bind them all."""

from __future__ import annotations

import os
import re
from typing import FrozenSet, List, Optional, Set

import libcst as cst

from advisor.model.names import dotted_name

# At column 0 only: an import in a `try` (which may fall back) or a function is indented.
_RELATIVE_IMPORT = re.compile(r"^from[ \t]+(\.+)([A-Za-z_][A-Za-z_0-9]*)", re.M)


def _entries(folder: str) -> FrozenSet[str]:
    """The module names a folder offers: `x` for `x.py`, `x.pyi`, a compiled `x.cpython-*.so`,
    or a folder `x/`."""
    try:
        names = os.listdir(folder)
    except OSError:
        return frozenset()
    return frozenset(name.split(".", 1)[0] for name in names)


def missing_relative_modules(path: str, text: str) -> List[str]:
    """The paths (`folder/x.py`) of the modules that the file's top-level relative imports name
    and its folders lack. Empty for most files (no `from .` at the start of a line)."""
    if "from ." not in text:
        return []
    folder = os.path.dirname(os.path.abspath(path))
    out = []
    for dots, first in _RELATIVE_IMPORT.findall(text):
        base = folder
        for _ in range(len(dots) - 1):
            base = os.path.dirname(base)
        entries = _entries(base)
        if entries and first not in entries:
            out.append(os.path.join(base, first + ".py"))
    return out


# At column 0: `from data.config import Option`, `import data.config`.
_PACKAGE_IMPORT = re.compile(r"^(?:from[ \t]+([A-Za-z_][\w.]*\.[A-Za-z_]\w*)[ \t]+import\b|import[ \t]+([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)[ \t]*$)", re.M)


def missing_package_modules(path: str, text: str, root: str = "") -> List[str]:
    """The paths (`data/config.py`) of the submodules that a plain script's top-level imports
    name in a package beside it that lacks them (`from data.config import Option` where
    `data/` has an `__init__.py` and no `config`): the package beside the script is the one
    Python loads, so the import fails. Empty unless the script is run from a folder that is no
    package and does not edit `sys.path`."""
    if "sys.path" in text or not re.search(r"^(?:from|import)[ \t]+[A-Za-z_]\w*\.", text, re.M):
        return []
    folder = os.path.dirname(os.path.abspath(path))
    if not _script_folder(folder, root):
        return []
    out = []
    for dotted in (a or b for a, b in _PACKAGE_IMPORT.findall(text)):
        parts = dotted.split(".")
        base = folder
        for index, part in enumerate(parts):
            if index == 0 or part in _entries(base):
                base = os.path.join(base, part)
                if index == 0 and not _plain_package(base):
                    break  # not a package beside the script: a library may provide it
                if index and not os.path.isdir(base):
                    break  # a module: what follows are its names
                continue
            out.append(os.path.join(base, part + ".py"))
            break
    return out


def _script_folder(folder: str, root: str) -> bool:
    """A folder whose files run as scripts, with the folder first on `sys.path`: no package,
    or the project's root (whose stray `__init__.py` makes no one import its scripts as
    modules of a package)."""
    return not os.path.isfile(os.path.join(folder, "__init__.py")) or (bool(root) and folder == os.path.abspath(root))


def _plain_package(folder: str) -> bool:
    """A folder with an `__init__.py` that does not widen its own search path (`__path__`,
    `pkgutil.extend_path`) nor plant modules (`sys.modules`)."""
    init = os.path.join(folder, "__init__.py")
    try:
        with open(init, encoding="utf-8", errors="replace") as handle:
            text = handle.read(200_000)
    except OSError:
        return False
    return "__path__" not in text and "sys.modules" not in text


def unimportable(model) -> bool:
    """A relative import at the top level of the module names a module its folder lacks, or a
    top-level `from M import name` takes a name the project's module M does not bind (only for
    a file of a project, whose cached result depends on those paths)."""
    return model.shared("unimportable", _unimportable)


def _unimportable(model) -> bool:
    if model.project is None or model.real_path is None:
        return False
    text, root = model.text or "", model.project.layout.root
    return (bool(missing_relative_modules(model.real_path, text)) or bool(missing_package_modules(model.real_path, text, root))
            or _lacks_imported_name(model))


# Text that can bind a module's names out of sight of its statements.
_DYNAMIC_BINDING = re.compile(r"\bglobals\(\)|\bexec\(|\bsetattr\(|\bvars\(\)|__dict__|sys\.modules|import \*")


def _lacks_imported_name(model) -> bool:
    view, path = model.project, os.path.abspath(model.real_path)
    here = os.path.dirname(path)
    # Where an absolute import leads is certain only for a script run from its own folder.
    plain_script = "sys.path" not in (model.text or "") and _script_folder(here, view.layout.root)
    for statement in model.module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue  # in a `try` (which may catch the ImportError) or an `if`: it may not run
        for small in statement.body:
            if type(small) is not cst.ImportFrom or type(small.names) is cst.ImportStar:
                continue
            level = len(small.relative)
            if not level and not plain_script:
                continue
            module = dotted_name(small.module) if small.module is not None else ""
            if module is None:
                continue
            # Beside the script only: its folder comes first on `sys.path` when it runs.
            found = (view.layout.relative_file(module, level, path) if level
                     else view.layout.lookup(module, [here]))
            if found is None or os.path.abspath(found) == path:
                continue
            if any(_unbound(view, found, dotted_name(alias.name) or "") for alias in small.names):
                return True
    return False


def _unbound(view, found: str, name: str) -> bool:
    """The project module at ``found`` surely binds no ``name`` (nor is it a submodule of the
    package ``found`` starts)."""
    if not name or "." in name:
        return False
    target = view.model(found)
    if target is None or target.module is None:
        return False
    # Once per module, however many scripts and names ask.
    bound = target.shared("top-level-bindings", lambda m: None if _DYNAMIC_BINDING.search(m.text or "")
                          else _bound_names(m.module))
    if bound is None or name in bound:
        return False
    if os.path.basename(found) == "__init__.py" and name in _entries(os.path.dirname(found)):
        return False  # `from pkg import sub`: Python loads the submodule
    return True


def _bound_names(module: cst.Module) -> Optional[Set[str]]:
    """The names a module's statements bind at its top level (in its `if`, `try`, `with` and
    loop bodies too), and those its functions declare `global`; None when a module
    `__getattr__` hands out any name."""
    names: Set[str] = set()
    for node in _top_level(module.body):
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef):
            names.add(node.name.value)
            if kind is cst.FunctionDef and node.name.value == "__getattr__":
                return None
        elif kind is cst.Assign:
            for target in node.targets:
                _target_names(target.target, names)
        elif kind in (cst.AnnAssign, cst.AugAssign):
            _target_names(node.target, names)
        elif kind is cst.For:
            _target_names(node.target, names)
        elif kind is cst.With:
            for item in node.items:
                if item.asname is not None:
                    _target_names(item.asname.name, names)
        elif kind is cst.ExceptHandler:
            if node.name is not None:
                _target_names(node.name.name, names)
        elif kind is cst.Import:
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                names.add((dotted_name(bound) or "").split(".")[0])
        elif kind is cst.ImportFrom and type(node.names) is not cst.ImportStar:
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                names.add(dotted_name(bound) or "")
    collector = _Globals()
    module.visit(collector)
    names |= collector.names
    # `__getattr__, __dir__, __all__ = lazy.attach(...)`: a lazy loader hands out the rest.
    return None if "__getattr__" in names else names


def _top_level(statements):
    """The statements and small statements that run at import, through compound bodies but
    not into function or class bodies."""
    for statement in statements:
        yield statement
        if type(statement) is cst.SimpleStatementLine:
            yield from statement.body
            continue
        if type(statement) in (cst.FunctionDef, cst.ClassDef):
            continue
        for part in ("body", "orelse", "finalbody"):
            block = getattr(statement, part, None)
            if block is None:
                continue
            if type(block) in (cst.Else, cst.Finally, cst.If):
                yield from _top_level([block] if type(block) is cst.If else block.body.body)
            elif isinstance(block, cst.BaseSuite):
                yield from _top_level(getattr(block, "body", ()))
        for handler in getattr(statement, "handlers", ()):
            yield handler
            yield from _top_level(handler.body.body)


def _target_names(target: cst.BaseExpression, names: Set[str]) -> None:
    kind = type(target)
    if kind is cst.Name:
        names.add(target.value)
    elif kind in (cst.Tuple, cst.List):
        for element in target.elements:
            _target_names(element.value, names)
    elif kind is cst.StarredElement:
        _target_names(target.value, names)


class _Globals(cst.CSTVisitor):
    """Names declared `global` anywhere (a function that binds them when it runs), and those a
    walrus binds."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Global(self, node: cst.Global) -> None:
        self.names.update(item.name.value for item in node.names)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        _target_names(node.target, self.names)
