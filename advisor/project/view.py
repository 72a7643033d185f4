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

from advisor.limits import FileTooLarge, read_regular
from advisor.project.layout import Layout, project_root

_TEXT_LIMIT = 4 << 20

# How many importers of one module are read: a module imported by hundreds of files is a
# library's core, and the callers that make it hot are not to be found by reading them all.
MAX_IMPORTERS = 48


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.MULTILINE)


def _import_lines(text: str) -> List[Tuple[int, str, List[str]]]:
    """(level, module, imported names) for each import statement, read from the text alone."""
    out: List[Tuple[int, str, List[str]]] = []
    for match in _FROM.finditer(text):
        names = [n.strip().split(" as ")[0].strip() for n in match.group(3).strip("() \t").split(",")]
        out.append((len(match.group(1)), match.group(2), [n for n in names if n.isidentifier()]))
    for match in _IMPORT.finditer(text):
        for item in match.group(1).split("#")[0].split(","):
            module = item.strip().split(" as ")[0].strip()
            if module and all(p.isidentifier() for p in module.split(".")):
                out.append((0, module, []))
    return out


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
        self._index: Optional[Dict[str, Set[str]]] = None
        self._imported: Dict[str, List[str]] = {}
        self.consulted: Set[str] = set()

    @classmethod
    def for_file(cls, path: str, build: Callable[[str], Optional[object]]) -> "ProjectView":
        return cls(project_root(path), build)

    # -- models ----------------------------------------------------------------------------
    def register(self, path: str, model) -> None:
        """The file being checked: its own model stands for it in every cross-file answer."""
        key = os.path.normpath(os.path.abspath(path))
        old = self._models.get(key)
        self._models[key] = model
        model.project = self
        model.real_path = key
        if old is not None and old is not model:
            # Another version of the file was read before: every answer built on it is stale.
            self._reset()

    def known(self, path: str, text: str):
        """The model already built for this path from this same text, if any."""
        model = self._models.get(os.path.normpath(os.path.abspath(path)))
        return model if model is not None and getattr(model, "text", None) == text else None

    def _reset(self) -> None:
        models = {k: m for k, m in self._models.items() if m is not None}
        self._symbols.clear()
        self._importers.clear()
        for model in models.values():
            model.forget_answers()

    def model(self, path: str):
        key = os.path.normpath(os.path.abspath(path))
        if key not in self._models:
            self._models[key] = None  # while it builds: an import cycle reads it as absent
            try:
                model = self._build(key)
            except BaseException:
                del self._models[key]  # stopped (a budget, a cancelled edit): not known absent
                raise
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
        if path not in self._importers:
            self._importers[path] = []
            found = []
            for other_path in sorted(self._import_index().get(path, ())):
                other = self.model(other_path)
                if other is not None:
                    found.append(other)
                    if len(found) >= MAX_IMPORTERS:
                        break
            self._importers[path] = found
        return self._importers[path]

    def related_texts(self, path: str, hops: int = 2) -> List[str]:
        """The texts of the project files within ``hops`` imports of a file, either way: where
        the context of its code (a training loop, a CUDA device) may be."""
        path = os.path.normpath(os.path.abspath(path))
        index = self._import_index()
        seen, frontier = {path}, {path}
        for _ in range(hops):
            frontier = {n for p in frontier for n in (*index.get(p, ()), *self._imports_of(p))} - seen
            seen |= frontier
        return [self._text(p) for p in sorted(seen - {path})]

    def related_models(self, path: str, hops: int = 2, limit: int = 32) -> List[object]:
        """The project files within ``hops`` imports of a file, either way, read (nearest
        first, at most ``limit``): where the loops that consume its values may be."""
        path = os.path.normpath(os.path.abspath(path))
        index = self._import_index()
        seen, frontier, order = {path}, [path], []
        for _ in range(hops):
            nxt = []
            for p in frontier:
                for n in sorted({*index.get(p, ()), *self._imports_of(p)}):
                    if n not in seen:
                        seen.add(n)
                        nxt.append(n)
                        order.append(n)
            frontier = nxt
        out = []
        for p in order[:limit]:
            model = self.model(p)
            if model is not None:
                out.append(model)
        return out

    def dependencies(self, path: str, hops: int = 3, limit: int = 512) -> Tuple[str, ...]:
        """The project files a file's findings may depend on: those within ``hops`` imports of
        it, either way (what it imports, what imports it, their neighbours)."""
        path = os.path.normpath(os.path.abspath(path))
        index = self._import_index()
        seen, frontier = {path}, {path}
        for _ in range(hops):
            frontier = {n for p in frontier for n in (*index.get(p, ()), *self._imports_of(p))} - seen
            seen |= frontier
            if len(seen) > limit:
                break
        return tuple(sorted(seen - {path}))

    def _import_index(self) -> Dict[str, Set[str]]:
        """Module file -> the project files whose import lines name it (read from the text)."""
        if self._index is None:
            index: Dict[str, Set[str]] = {}
            for path in self.layout.files():
                for target in self._imports_of(path):
                    index.setdefault(target, set()).add(path)
            self._index = index
        return self._index

    def _imports_of(self, path: str) -> List[str]:
        known = self._imported.get(path)
        if known is None:
            known = []
            for level, module, names in _import_lines(self._text(path)):
                if level:
                    found = [self.layout.relative_file(module, level, path)]
                    found += [self.layout.relative_file(f"{module}.{n}" if module else n, level, path) for n in names]
                else:
                    found = [self.layout.module_file(module, path)]
                    found += [self.layout.module_file(f"{module}.{n}", path) for n in names]
                known.extend(f for f in found if f is not None and f != path)
            self._imported[path] = known
        return known

    def _text(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            try:
                text = read_regular(path, _TEXT_LIMIT)[0].decode("utf-8", "replace")
            except (OSError, ValueError, FileTooLarge):
                text = ""  # a named pipe, a device, a vanished or huge file: no imports seen
            self._texts[path] = text
        return text


# -- the views of this process ----------------------------------------------------------------
_VIEWS: Dict[str, ProjectView] = {}
# Past this many parsed files in one process, the views start over: a large tree is checked
# with bounded memory, at the price of parsing a neighbour again.
MAX_MODELS = 256


def project_view(path: str, build: Callable[[str], Optional[object]]) -> ProjectView:
    """The view of ``path``'s project in this process (made on first use)."""
    root = project_root(path)
    view = _VIEWS.get(root)
    if view is None:
        if sum(len(v._models) for v in _VIEWS.values()) > MAX_MODELS:
            _VIEWS.clear()
        view = _VIEWS[root] = ProjectView(root, build)
    return view


def forget_views() -> None:
    """Drops every view (a file changed under them: the language server, tests)."""
    _VIEWS.clear()
