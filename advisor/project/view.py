"""The project around a checked file: its other modules, read on demand, so that the value model
and the heat of functions can cross file boundaries.

A `ProjectView` parses the project's files lazily (at most once each; the file being checked is
registered as it is), resolves the names a file imports from the project to the functions,
classes and module-level values of the file that defines them, and finds the project files that
import a given module (its importers: a helper is hot because of its callers). Every file it
consulted for a check is recorded, so that a cached result can be checked against them.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Dict, List, Optional, Set, Tuple

from advisor.project.layout import Layout, project_root

# How many importers of one module are read: a module imported by hundreds of files is a
# library's core, and the callers that make it hot are not to be found by reading them all.
MAX_IMPORTERS = 48


class Symbol:
    """A name of another project module: a function, a class, or a module itself."""

    __slots__ = ("model", "kind", "info", "name")

    def __init__(self, model, kind: str, info=None, name: str = "") -> None:
        self.model = model  # the FileModel of the module that defines it
        self.kind = kind  # "function", "class", "module" or "value"
        self.info = info  # FunctionInfo, ClassInfo, or None
        self.name = name  # the name inside that module ("BoxLoss", "Trainer.step", "device")


class ProjectView:
    def __init__(self, root: str, build: Callable[[str], Optional[object]]) -> None:
        self.layout = Layout(root)
        self._build = build  # path -> FileModel or None (unreadable, not Python, refused)
        self._models: Dict[str, Optional[object]] = {}
        self._texts: Dict[str, str] = {}
        self._importers: Dict[str, List[object]] = {}
        self._symbols: Dict[Tuple[int, str], Optional[Symbol]] = {}
        self.consulted: Set[str] = set()

    @classmethod
    def for_file(cls, path: str, build: Callable[[str], Optional[object]]) -> "ProjectView":
        return cls(project_root(path), build)

    # -- models ----------------------------------------------------------------------------
    def register(self, path: str, model) -> None:
        """The file being checked: its own model stands for it in every cross-file answer."""
        key = os.path.normpath(os.path.abspath(path))
        self._models[key] = model
        model.project = self
        model.real_path = key

    def model(self, path: str):
        key = os.path.normpath(os.path.abspath(path))
        if key not in self._models:
            self._models[key] = None  # while it builds: an import cycle reads it as absent
            model = self._build(key)
            if model is not None:
                model.project = self
                model.real_path = key
            self._models[key] = model
        model = self._models[key]
        if model is not None:
            self.consulted.add(key)
        return model

    # -- names imported from the project ---------------------------------------------------
    def symbol(self, importer, qualname: str) -> Optional[Symbol]:
        """What an imported dotted name (`utils.accuracy`, `.losses.BoxLoss`) names in the
        project, or None (a library, or nothing the project defines)."""
        key = (id(importer), qualname)
        if key not in self._symbols:
            self._symbols[key] = None
            self._symbols[key] = self._resolve(importer, qualname, 0)
        return self._symbols[key]

    def _resolve(self, importer, qualname: str, depth: int) -> Optional[Symbol]:
        if depth > 4:
            return None
        path = getattr(importer, "real_path", None)
        if path is None:
            return None
        level = len(qualname) - len(qualname.lstrip("."))
        parts = qualname[level:].split(".") if qualname[level:] else []
        for cut in range(len(parts), -1, -1):
            module, rest = ".".join(parts[:cut]), parts[cut:]
            if level:
                found = self.layout.relative_file(module, level, path)
            elif module:
                found = self.layout.module_file(module, path)
            else:
                found = None
            if found is None:
                continue
            target = self.model(found)
            if target is None:
                return None
            if not rest:
                return Symbol(target, "module")
            return self._member(target, rest, depth)
        return None

    def _member(self, model, rest: List[str], depth: int) -> Optional[Symbol]:
        name = rest[0]
        facts = model.facts
        if len(rest) == 1 and name in facts.functions and facts.functions[name].class_name is None:
            defs = [d for d in facts.function_defs[name] if d.class_name is None]
            return Symbol(model, "function", defs[-1], name)
        if name in facts.classes:
            info = facts.classes[name]
            if len(rest) == 1:
                return Symbol(model, "class", info, name)
            method = facts.functions.get(f"{name}.{rest[1]}")
            return Symbol(model, "function", method, f"{name}.{rest[1]}") if method is not None else None
        target = model.imports.aliases.get(name)
        if target is not None:
            # A re-export (`from .losses import BoxLoss` in a package's __init__).
            return self._resolve(model, ".".join([target, *rest[1:]]), depth + 1)
        if len(rest) == 1 and facts.assignments.get(("<module>", name)):
            return Symbol(model, "value", None, name)
        return None

    # -- who imports a module --------------------------------------------------------------
    def importers(self, model) -> List[object]:
        """The project files that import ``model``'s module (read, at most MAX_IMPORTERS)."""
        path = getattr(model, "real_path", None)
        if path is None:
            return []
        if path in self._importers:
            return self._importers[path]
        self._importers[path] = []
        name = self.layout.module_name(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem == "__init__":
            stem = os.path.basename(os.path.dirname(path))
        words = {stem} | ({name.rsplit(".", 1)[-1]} if name else set())
        pattern = re.compile(r"^\s*(from|import)\s[^\n]*\b(" + "|".join(map(re.escape, words)) + r")\b", re.MULTILINE)
        out: List[object] = []
        for candidate in self.layout.files():
            if candidate == path or not pattern.search(self._text(candidate)):
                continue
            other = self.model(candidate)
            if other is not None and self._imports(other, path):
                out.append(other)
                if len(out) >= MAX_IMPORTERS:
                    break
        self._importers[path] = out
        return out

    def _imports(self, other, path: str) -> bool:
        """Some name ``other`` imports resolves into the file at ``path``."""
        for qualname in set(other.imports.aliases.values()):
            symbol = self.symbol(other, qualname)
            if symbol is not None and getattr(symbol.model, "real_path", None) == path:
                return True
        return False

    def _text(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            try:
                with open(path, "rb") as handle:
                    text = handle.read(4 << 20).decode("utf-8", "replace")
            except OSError:
                text = ""
            self._texts[path] = text
        return text
