"""Top-level classes that nothing in the project builds or names: a loss kept from an earlier
experiment, a model variant in a module no script imports, a vendored package's classifier the
project never uses. What their methods do costs nothing on any run the project makes, so the
engine reports it at info severity. So is every line of a module no run of the project imports
(`project/reachability.py`), and a registered class no text of the project names
(`model/registered_classes.py`).

A class counts as unbuilt only when every way of reaching it is ruled out:

- in its own file, its name is read nowhere that runs: not at module level, not in a function,
  not in another class that is itself reached (a loss only an unbuilt loss builds is unbuilt);
- it has no decorator (registries build classes by the name a config file gives);
- the file never looks itself up by name (`globals()`, `eval`, `sys.modules`, `vars()`);
- no project file within a few imports of it, or naming its module (an import the analysis
  cannot resolve still names it), names the class (a file that imports it and never reads the
  name again does not build it, a package's `__init__.py` that re-exports it included, unless
  it declares an `__all__`), looks the module up with `getattr`,
  `__dict__` or `inspect.getmembers`, or imports `*` from it; a test module (one that imports
  `unittest` or `pytest`) builds nothing a run of the project uses;
- no config file at the project's root names it (`cog.yaml` names a predictor class);
- the project does not load code by a name given as text (`importlib.import_module`,
  `instantiate_from_config`, Hydra's `instantiate`, `LightningCLI`): there, a config the user
  writes may build any class. A loader of config targets in a project that ships config files
  naming targets (`target: losses.SmoothedLoss`) builds what those files name: a class none
  of them names is still unbuilt (`import_module(f"trainers.{name}_trainer")` loads only
  modules named so);
- the file is not in a package of a project others install (a `setup.py`, a `[project]` table):
  a library's classes are built by its users' code. Unless the project keeps its own runs beside
  the package (a `configs/` folder, or experiments under `playground/`, `experiments/` or
  `exps/`): a framework fork that ships a paper's runs builds only what those runs name. A folder on the way that holds a licence
  of its own is third-party code copied into the project (`libraries/mingpt/LICENSE`): only the
  project's own code builds its classes, so that exception does not hold there (a licence file
  added or removed later is seen when the file itself is checked again).

Only the files a check depends on are read (`ProjectView.dependencies`: the files within a few
imports, the root's config files, and the files that load code by name), so a cached answer
and a fresh one agree.

A file checked outside any project (no `pyproject.toml`, `setup.cfg` or `.git` above it) has no
unbuilt classes: its classes are what its user will build. The names are matched as words over
the code and the strings without spaces (a dotted path, a registry key): a word in a comment,
a docstring or a sentence (`"a Practical Degradation Model for ..."`) names no class.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Dict, List, Set, Tuple

import libcst as cst

from advisor.model.prose import without_prose
from advisor.model.uncalled_methods import SELF_LOOKUP as _SELF_LOOKUP, uncalled_method_rows
from advisor.model.registered_classes import (
    ALL_LIST as _ALL_LIST, PICKED_BY_NAME, REGISTERED_CLASS, looked_up_by_module, module_looked_up, ships_runs,
    unnamed_registered_rows,
)
from advisor.project.layout import module_stem, vendored

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Rows = Callable[[cst.CSTNode], Tuple[int, int]]


def unbuilt_class_rows(model, rows: Rows) -> List[Tuple[int, int]]:
    """The first and last rows (1-based) of the file's top-level classes nothing in the project
    builds or names, sorted; computed once per file. ``rows(statement)`` is asked only when the
    file was parsed whole (the chunks of a chunked parse already say where each statement is)."""
    return model.shared("unbuilt-class-rows", lambda m: _unbuilt(m, rows))


def _units(model, rows: Rows) -> List[Tuple[cst.CSTNode, str, int, int]]:
    """(top-level statement, its text, first row, last row). A chunk of several statements (`a =
    1; b = 2`) is one unit of its first statement and plain code: no class is found in it."""
    text = model.text
    chunked = model.chunked
    if chunked is not None and chunked.prints_text:
        out = []
        firsts = chunked.first_lines
        total = text.count("\n") + 1
        for index, chunk in enumerate(chunked.chunks):
            if not chunk.statements:
                continue
            last = firsts[index + 1] - 1 if index + 1 < len(firsts) else total
            statement = chunk.statements[0] if len(chunk.statements) == 1 else None
            out.append((statement, chunk.text, firsts[index], last))
        return out
    lines = text.splitlines()
    out = []
    for statement in model.module.body:
        first, last = rows(statement)
        out.append((statement, "\n".join(lines[first - 1:last]), first, last))
    return out


def _unbuilt(model, rows: Rows) -> List[Tuple[int, int]]:
    project, path, text = model.project, model.real_path, model.text
    if project is None or path is None or not text:
        return []
    if project.unreached(path):
        # No run of the project imports the module (project/reachability.py): none of it runs.
        return [(1, text.count("\n") + 1)]
    found = _unbuilt_definitions(model, rows)
    if model.facts.classes:
        # Methods nothing calls (model/uncalled_methods.py), outside the classes already found.
        methods = uncalled_method_rows(model, rows)
        if methods:
            found = _merged(found, methods)
    if (("register" in text and REGISTERED_CLASS.search(text)) or ("globals()" in text and PICKED_BY_NAME.search(text))
            or (model.facts.classes and module_looked_up(model))):
        # Registered classes no config names (model/registered_classes.py); so for the classes
        # of a module another looks up by a name it is given (`getattr(losses, conf["name"])`).
        found = _merged(found, unnamed_registered_rows(model, _units(model, rows)))
    return found


def _merged(spans: List[Tuple[int, int]], more: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """Sorted spans with none inside another (a method of a class found unbuilt is dropped): the
    engine searches them by their first rows."""
    out: List[Tuple[int, int]] = []
    for first, last in sorted(set(spans) | set(more)):
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


def _unbuilt_definitions(model, rows: Rows) -> List[Tuple[int, int]]:
    project, path, text = model.project, model.real_path, model.text
    if project is None or path is None or not text or _SELF_LOOKUP.search(text):
        return []
    if not any(type(s) in (cst.ClassDef, cst.FunctionDef) and not s.decorators for s in model.module.body):
        return []
    if (project.layout.installable() and os.path.isfile(os.path.join(os.path.dirname(path), "__init__.py"))
            and not vendored(path, project.layout.root) and not ships_runs(project.layout)):
        # A package others install: its classes are built by their code. Not a framework fork
        # that keeps its own runs beside the package (a `playground/` of experiments, each
        # building its model from the package): what none of them builds runs nowhere.
        return []
    # Undecorated top-level classes and functions, by name: their rows and the words they read.
    candidates: Dict[str, List[Tuple[int, int]]] = {}
    functions: Set[str] = set()
    by_owner: Dict[str, List[Set[str]]] = {}
    frontier: List[Set[str]] = []  # words read by code that runs: module level, decorated definitions
    for statement, unit_text, first, last in _units(model, rows):
        words = set(_WORD.findall(without_prose(unit_text)))
        kind = type(statement)
        if kind in (cst.ClassDef, cst.FunctionDef) and not statement.decorators:
            name = statement.name.value
            candidates.setdefault(name, []).append((first, last))
            by_owner.setdefault(name, []).append(words - {name})
            if kind is cst.FunctionDef:
                functions.add(name)
        else:
            frontier.append(words)
    # A function no code of the file names is reached only where something runs it without
    # naming it (`main`, a test, a module exposed whole to a command line); otherwise it is
    # unbuilt unless another file names it, as a class is (a training loop kept from an
    # earlier experiment in a script whose `__main__` block calls another one).
    entries = _entry_points(model, path, text)
    named = set().union(*frontier, *(w for ws in by_owner.values() for w in ws))
    reached: Set[str] = {name for name in functions if name not in named and entries(name)}
    for name in reached:
        frontier.extend(by_owner[name])
    _spread(frontier, reached, candidates, by_owner)
    unreached = [name for name in candidates if name not in reached]
    if not unreached:
        return []
    if project.loads_by_name(path):
        return []  # any class may be built by a config the user writes
    # `instantiate_from_config(cfg)`: a class a config file of the project names may be built.
    configured = project.loads_config_targets()
    # The files within a few imports, and every file that names the module (`from
    # pkg.moco.builder import MoCo` names `builder` even where the import does not resolve).
    nearby = project.dependencies(path)
    if module_looked_up(model):
        return []
    # Names another file uses are reached, and so is what they read, until nothing changes (each
    # name is looked up in the project once).
    looked: Set[str] = set()
    cleaned: Dict[str, str] = {}
    packages: Dict[str, bool] = {}

    def _package_looked_up(path: str) -> bool:
        # `getattr(models, config["arch"]["type"])` reaches what `models/__init__.py` imports.
        if os.path.basename(path) != "__init__.py":
            return False
        if path not in packages:
            packages[path] = looked_up_by_module(project, path, nearby)
        return packages[path]

    tests: Dict[str, bool] = {}

    def test_module(path: str) -> bool:
        # Asked for each name a file holds: the file's imports are searched once.
        if path not in tests:
            tests[path] = _test_module(path, project.text_of(path))
        return tests[path]

    def code_of(path: str) -> str:
        found = cleaned.get(path)
        if found is None:
            found = cleaned[path] = without_prose(project.text_of(path))
        return found

    # What each nearby file reaches of this module's functions, worked out once per file.
    stems = _module_names(path)
    reaches: Dict[str, Callable[[str], bool]] = {}

    def reaches_function(other: str, name: str) -> bool:
        found = reaches.get(other)
        if found is None:
            found = reaches[other] = _function_reach(code_of(other), stems)
        return found(name)

    while True:
        named_elsewhere = []
        for name in unreached:
            if name in reached or name in looked:
                continue
            looked.add(name)
            pattern = re.compile(r"\b%s\b" % re.escape(name))

            def names(code: str, other: str, pattern=pattern, name=name) -> bool:
                if name in functions:
                    return reaches_function(other, name)
                return _names(code, other, pattern)

            if (any(name in project.text_of(p) and not test_module(p)
                    and (names(code_of(p), p) or _package_looked_up(p))
                    for p in nearby)
                    or project.named_in_configs(name)
                    or (configured and project.named_in_project_configs(name))):
                named_elsewhere.append(name)
        if not named_elsewhere:
            break
        reached.update(named_elsewhere)
        _spread([w for name in named_elsewhere for w in by_owner[name]], reached, candidates, by_owner)
    return sorted(rows for name in unreached if name not in reached for rows in candidates[name])


# A test module: one that imports a test runner, or pytest's `conftest.py`. What only tests build runs
# in no run of the project (`class TestPPPModel(unittest.TestCase)` building the one agent no
# script picks).
_TEST_IMPORT = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:unittest(?!\.mock)|pytest)\b", re.MULTILINE)


def _test_module(path: str, text: str) -> bool:
    # Not by the name alone: an evaluation script `test_net.py` builds what it evaluates.
    return os.path.basename(path) == "conftest.py" or _TEST_IMPORT.search(text) is not None


# Whatever runs a function without its file naming it: test runners, `fire.Fire()` with no
# component (it exposes every function of the module), torch.hub's `hubconf.py`.
_EXPOSED_WHOLE = re.compile(r"\bFire\(\s*\)")
_RUN_BY_NAME = frozenset({"hubconf.py", "conftest.py", "__main__.py", "setup.py"})


def _entry_points(model, path: str, text: str) -> Callable[[str], bool]:
    """Which of the file's functions no code of it names still run: `main` (a launcher or a
    console script calls it), test functions, every function of a file a tool runs by name or
    that exposes its module whole, and every function of a module that is neither a script (a
    `__main__` block says what runs) nor imported by the project's own files (its functions
    are an API for code outside it: a notebook, a user's script)."""
    base = os.path.basename(path)
    if base in _RUN_BY_NAME or base.startswith("test_") or base.endswith("_test.py") or _EXPOSED_WHOLE.search(text):
        return lambda name: True
    if not model.facts.main_blocks and not model.project.imported(path):
        return lambda name: True
    return lambda name: name == "main" or name.startswith("test")


# `from pkg.blocks import A, B` (one line, continued lines, or in parentheses).
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|(?:[^\n\\]*\\\n)*[^\n]*)", re.MULTILINE)


_ALIASED = re.compile(r"\s+as\s")


def _names(text: str, path: str, pattern: "re.Pattern[str]") -> bool:
    """The file (``text``: its code, `without_prose`) names the class where it may build it. A file that imports the name and never
    reads it again (`from blocks import TimestepEmbedder, LabelEmbedder`, then only the first
    used) does not, nor a package's `__init__.py` that only re-exports it (the project is not
    installed by others here: a file that uses the re-export names the class itself), also
    where it lists the name in its `__all__`; a module with an `__all__` of its own (an explicit
    export), a file that imports it under another name, and a file that looks its own names up
    by text still do. A file that defines a class or function
    of that name at its top level, and neither imports it nor reads it from a module
    (`losses.VarifocalLoss`), means its own by it."""
    matches = list(pattern.finditer(text))
    if matches and _defines(text, pattern) and not any(text[n.start() - 1:n.start()] == "." for n in matches) and not any(
            m.start() <= n.start() < m.end() for m in _FROM_IMPORT.finditer(text) for n in matches):
        return False  # its own class of that name (a copy of the module kept beside it)
    package = os.path.basename(path) == "__init__.py"
    if "__all__" in text and package and not _SELF_LOOKUP.search(text):
        # A package's export list names what it re-exports, and builds none of it: a file that
        # uses the export names the class itself (the project is not installed by others here).
        exported = [m.span() for m in _ALL_LIST.finditer(text)]
        matches = [n for n in matches if not any(a <= n.start() < b for a, b in exported)]
        if not matches:
            return False
    if len(matches) != 1:
        return bool(matches)
    if ("__all__" in text and not package) or _SELF_LOOKUP.search(text):
        return True  # a module's own export list (what it offers by name), or a lookup by text
    if _ALIASED.match(text, matches[0].end()):
        return True  # `import NativeScalerWithGradNormCount as NativeScaler`: used by its alias
    at = matches[0].start()
    return not any(m.start() <= at < m.end() for m in _FROM_IMPORT.finditer(text))


def _defines(text: str, pattern: "re.Pattern[str]") -> bool:
    """``text`` defines the name at its top level (`class VarifocalLoss(nn.Module):`)."""
    return re.search(r"^(?:class|def)\s+" + pattern.pattern, text, re.MULTILINE) is not None


def _module_names(path: str) -> Set[str]:
    """The names a file reaches the module by: its own, and those of the packages it sits in
    (`pkg.train_one_epoch` after `pkg/__init__.py` re-exports it from `pkg/engine.py`)."""
    out = {module_stem(path)}
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        out.add(os.path.basename(folder))
        folder = os.path.dirname(folder)
    out.discard("__init__")
    return out


_IMPORT_WORD = re.compile(r"\bimport\b")


def _function_reach(code: str, stems: Set[str]) -> Callable[[str], bool]:
    """Which of the module's functions a file (``code``: without prose) reaches: through the
    module or a package holding it (`utils.train(...)`, `U.train` after `import utils as U`,
    `from pkg import *`), or an import of the name that the file reads again (`from
    layers.utils import train`, or from a package that re-exports it). A word alone does not:
    `train` is also a method of every trainer (`exp.train(setting)`), `evaluate` a model's."""
    names = "|".join(re.escape(stem) for stem in sorted(stems))
    aliases = set(stems) | set(re.findall(r"\b(?:%s)\s+as\s+(\w+)" % names, code))
    # A lookahead, so that `loading.cifar.get_loaders` gives `get_loaders` through `cifar` after
    # `cifar` through `loading` (matches of a dotted path overlap).
    through = set(re.findall(r"\b(?:%s)\s*\.\s*(?=(\w+))" % "|".join(re.escape(a) for a in sorted(aliases)), code))
    if re.search(r"\b(?:%s)\s+import\s+\*" % names, code):
        # `from core.bcp import *` brings every name in, but the file runs only those its code
        # says (a commented-out `# evaluate_bcp(...)` is prose, and reaches nothing).
        said = set(re.findall(r"(?<![.\w])([A-Za-z_]\w*)", code))  # bare names, not `.train()` methods
        return lambda name: name in said
    imported: Set[str] = set()
    aliased: Set[str] = set()  # `import train_epoch_sparse as train_epoch`: used by its alias
    for match in _FROM_IMPORT.finditer(code):
        parts = _IMPORT_WORD.split(match.group(0), 1)
        if len(parts) == 2:
            imported.update(_WORD.findall(parts[1]))
            aliased.update(re.findall(r"(\w+)\s+as\s+\w+", parts[1]))
    counts: Dict[str, int] = {}
    for word in _WORD.findall(code):
        counts[word] = counts.get(word, 0) + 1
    exported = "__all__" in code or bool(_SELF_LOOKUP.search(code))
    return lambda name: name in through or name in aliased or (
        name in imported and (counts.get(name, 0) > 1 or exported))


def _spread(frontier: List[Set[str]], reached: Set[str], candidates, by_owner) -> None:
    """Marks reached every definition the words of ``frontier`` name, and what they name."""
    while frontier:
        words = frontier.pop()
        for name in words & candidates.keys():
            if name not in reached:
                reached.add(name)
                frontier.extend(by_owner.get(name, ()))


