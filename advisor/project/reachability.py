"""Modules no run of the project imports: a vendored copy of a library whose other copy is the
one in use, a detector family's package that nothing imports, a training engine kept beside the
one the scripts import. Nothing in them runs, so what the rules report there costs no run
anything (the engine lowers it to info, as for a class nothing builds).

A module is reached when a chain of imports leads to it from a root. The roots are, read from
the texts alone:

- a file outside any package (its folder has no `__init__.py`): a script, or a loose module
  anything may import;
- a module of a distribution vendored with its own `setup.py` or `pyproject.toml` (installed
  from its folder, it is imported by a name the project's roots do not resolve);
- outside a vendored copy the rest of the project imports from (a folder on the way holds a
  licence of its own, as `libraries/mmcv/LICENSE`, and some file outside it imports a module in
  it; a licensed folder nothing outside imports is a sub-project of its own), a module of a package others install, or one no project file imports: an API for
  code outside the project (a notebook, a user's script). A vendored copy is used only by the
  project's own code, so there only imports count;
- outside a folder whose name says its code was set aside (`deprecated/`, `obsolete/`,
  `archive/`, `attic/`, `graveyard/`, `unused/`, `old/`: there only a text outside the folder that names the module, or an import
  from a reached module, counts), a file with a `__main__` block, a test module (in a `tests/` folder, or a `test_*.py` that
  imports a test framework or defines tests), a file a tool runs by name (`setup.py`,
  `hubconf.py`, `conftest.py`, `__main__.py`), or one with a loop or a `main()` call at its top
  level (a script with no `__main__` block); but a script inside a top-level package that
  project files outside it import from (a copy of LLaVA a captioning helper loads, with its own
  `train/` and `eval/` scripts) only where a text outside that package names it: the project
  runs what it imports from such a package, not the package's own runs. When none of the
  package's training scripts is reached, its modules run only where the project's code calls
  them (`untrained_package`: a module forward no call is seen to run is not taken as trained,
  and calls from its unreached modules give no heat, model/file_model.py);
- the `__init__.py` of a package at a source root (a package others may import);
- a module another file, a launch text or a config file names by its dotted name or its path
  (`python -m pkg.train`, `"tools/train.py"` in a launcher, `custom_imports=["pkg.ops"]`, `target:
  ldm.models.ddpm.LatentDiffusion`): a loader that takes a module's name as text
  (`import_module(name)`) finds it only by such a name; one that makes the name from a package
  prefix (`import_module("models." + arch)`) is an importer of every module it may load (the
  import index counts it so). So is a module a notebook imports (by its dotted name, or by its
  bare name from the module's folder).

Importing a module of a package runs the package's `__init__.py` first, so an `__init__.py` is
reached when anything under its folder is imported by a reached file. Where the project's file
list, launch texts or config files are too many to read, or where the search grows past a bound,
every module counts as reached.
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Set, Tuple

from advisor.project.layout import module_stem, vendored_folder

_MAIN_BLOCK = re.compile(r"__name__\s*==\s*['\"]__main__['\"]|['\"]__main__['\"]\s*==\s*__name__")
# A script with no `__main__` block: a loop, or a call of its entry function, at the top level.
_TOP_LEVEL_RUN = re.compile(r"^(?:for|while|with)\b|^(?:main|train|run|fit|evaluate|test)\w*\(", re.MULTILINE)
_TESTS = re.compile(r"^(?:import|from)[ \t]+(?:pytest|unittest)\b|^def test_|^class Test", re.MULTILINE)
_RUN_BY_NAME = frozenset({"hubconf.py", "conftest.py", "__main__.py", "setup.py"})
_MAX_VISITED = 2000


def unreached(view, path: str) -> Tuple[bool, Tuple[str, ...]]:
    """(whether no root reaches ``path``'s module, the files the search looked at). The files
    looked at are what the answer depends on (with the files that name them)."""
    layout = view.layout
    if not layout.files() or layout.launch_texts() is None or not path.endswith(".py"):
        return False, ()
    importers = _init_importers(view)
    seen: Set[str] = {path}
    queue: List[str] = [path]
    while queue:
        current = queue.pop()
        if _root(view, current):
            return False, tuple(sorted(seen))
        for other in (*view.importer_paths(current), *importers.get(current, ())):
            if other not in seen:
                seen.add(other)
                queue.append(other)
        if len(seen) > _MAX_VISITED:
            return False, tuple(sorted(seen))
    return True, tuple(sorted(seen))


def _init_importers(view) -> Dict[str, Set[str]]:
    return view.init_importers(_build_init_importers)


def _build_init_importers(root: str, index: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    """Package `__init__.py` -> the files that import some module under its folder (importing
    `pkg.sub.mod` runs `pkg/__init__.py` and `pkg/sub/__init__.py` first)."""
    out: Dict[str, Set[str]] = {}
    for target, importers in index.items():
        folder = os.path.dirname(target)
        while folder.startswith(root + os.sep):
            init = os.path.join(folder, "__init__.py")
            if not os.path.isfile(init):
                break
            if init != target:
                out.setdefault(init, set()).update(importers)
            folder = os.path.dirname(folder)
    return out


def _root(view, path: str) -> bool:
    known = view.module_roots.get(path)
    if known is None:
        known = view.module_roots[path] = _is_root(view, path)
    return known


# Folders whose names say the code in them was set aside (`deprecated/`, `archive/`).
_RETIRED = frozenset({"deprecated", "obsolete", "archive", "archived", "attic", "graveyard", "unused", "dead_code", "old"})


def _retired_folder(path: str, root: str) -> Optional[str]:
    """The outermost folder on ``path``'s way from the project's root whose name says its code
    was set aside, or None."""
    folder = root
    for part in os.path.relpath(os.path.dirname(path), root).split(os.sep):
        folder = os.path.join(folder, part)
        if part.lower() in _RETIRED:
            return folder
    return None


def _is_root(view, path: str) -> bool:
    folder = os.path.dirname(path)
    base = os.path.basename(path)
    retired = _retired_folder(path, view.layout.root)
    if retired is not None:
        # Code its authors set aside (`deprecated/train.py` beside the trainer the README runs):
        # it runs where a text outside that folder names it, or where a reached module imports it.
        return _named(view, path, outside=retired)
    # A folder without `__init__.py` inside a package the project imports from (`llava/train/`,
    # `aot/networks/managers/`) is part of that package (a namespace folder): its modules are
    # judged as the package's are, below.
    if not os.path.isfile(os.path.join(folder, "__init__.py")) and copy_used_by_project(view, path):
        # A licensed copy of another project kept as loose files, which the rest of the
        # project imports from (VGen's `metric/dino/`, whose backbone its metric script loads):
        # the project runs what it imports; the copy's own scripts run only where a text
        # outside it names them.
        copy = vendored_folder(path, view.layout.root)
        return base not in _RUN_BY_NAME and _runs_as_script(view.text_of(path)) and _named(view, path, outside=copy)
    if not os.path.isfile(os.path.join(folder, "__init__.py")) and _used_package(view, path) is None:
        return not _loose_module_left_out(view, path)
    if base in _RUN_BY_NAME:
        return True
    parts = set(os.path.relpath(folder, view.layout.root).split(os.sep))
    if "tests" in parts or "test" in parts:
        return True
    text = view.text_of(path)
    if _runs_as_script(text):
        # A script of a package the rest of the project imports from (a copy of LLaVA whose
        # model a captioning helper loads): the project runs what it imports; the copy's own
        # training and evaluation scripts run only where some text outside it names them. So
        # does a script whose imports find their modules only from a folder of the project
        # above its own (`from training.data import ...` in `modules/clap/training/main.py`,
        # run from `modules/clap/`): the script of another project copied in whole.
        package = _used_package(view, path) or _foreign_root(view, path, text)
        return package is None or _named(view, path, outside=package)
    if (base.startswith("test_") or base.endswith("_test.py")) and _TESTS.search(text):
        return True  # a test module a runner collects (not `test_time_aug.py`, a transform)
    if _in_nested_distribution(path, view.layout.root):
        # `externals/rl_games/setup.py`: installed on its own (`pip install -e externals/rl_games`),
        # its modules are imported by their package's name, which the project's roots do not
        # resolve: the import index cannot tell whether it is used.
        return True
    if not used_copy(view, path):
        if view.layout.installable():
            return True  # a package others install: its modules are an API
        if not view.importer_paths(path) and not _init_importers(view).get(path) and not (
                _left_beside_used(view, path) and not _import_names(view, path)):
            return True  # imported by no project file: an API for a notebook or a user's script
    return _named(view, path)


_RUNS_A_SCRIPT = re.compile(r"(?m)(?:^|[\s;&|(])(?:python3?|torchrun|deepspeed|accelerate[ \t]+launch)[ \t]")


def undocumented_script(view, path: str) -> bool:
    """The project's launch texts (its READMEs and shell scripts) run Python scripts, and no
    text of the project names ``path`` as a thing to run or load: a script its authors do not
    document running (a copied example whose helpers the project imports)."""
    texts = view.layout.launch_texts()
    if not texts or not any(_RUNS_A_SCRIPT.search(view.text_of(t)) for t in texts):
        return False
    # Its file name anywhere in those texts or a notebook (`train_big.py` in a usage guide; a
    # script of the same name elsewhere counts too, which only keeps it an entry point).
    named = re.compile(r"(?<![\w.-])%s(?!\w)" % re.escape(os.path.basename(path)))
    if any(named.search(view.text_of(t)) for t in [*texts, *view.layout.notebooks()]):
        return False
    return not _named(view, path)


def _named(view, path: str, outside: str = "") -> bool:
    """Some other text names the module as a thing to run or load: its dotted name in a Python
    file or a launch text, its path in a launch text, its stem in a notebook, or its stem in a
    config file of a project that builds what its configs name. With ``outside`` (a folder),
    only texts outside that folder count."""
    layout = view.layout
    inside = outside + os.sep if outside else None

    def counted(other: str) -> bool:
        return inside is None or not os.path.abspath(other).startswith(inside)

    dotted = layout.module_name(path)
    relative = os.path.relpath(path, layout.root).replace(os.sep, "/")
    needles = [n for n in (dotted, relative) if n and ("." in n.replace(".py", "") or "/" in n)]
    for needle in needles:
        # The name itself, not a longer one it begins (`pkg.mod.sub`), and not on an import
        # line: an import counts only where the importer is reached.
        pattern = re.compile(r"^(?![ \t]*(?:from|import)[ \t]).*(?<![\w./])%s(?![\w/]|\.\w)" % re.escape(needle),
                             re.MULTILINE)
        # Every file that holds the name holds the module's last name: that (shared) list is
        # the one searched, not the whole project once per name.
        if any(other != path and counted(other) and needle in view.text_of(other) and pattern.search(view.text_of(other))
               for other in view.files_containing(module_stem(path))):
            return True
        if any(counted(launch) and needle in view.text_of(launch) and pattern.search(view.text_of(launch))
               for launch in layout.launch_texts() or ()):
            return True
        configs = layout.config_files()
        if configs is None or any(counted(c) and needle in view.text_of(c) for c in configs):
            return True  # `custom_imports=["pkg.ops"]`, `target: pkg.models.ddpm`: a name a loader takes
    # A notebook imports it by its dotted name, or by its bare name from the module's folder.
    if dotted and any(counted(n) for n in view.notebooks_containing(dotted)):
        return True
    return any(os.path.dirname(n) == os.path.dirname(path) and counted(n)
               for n in view.notebooks_containing(module_stem(path)))


# The top module of an absolute import (`from training.data import x`, `import open_clip`).
_ABSOLUTE_IMPORT = re.compile(r"^(?:from[ \t]+([A-Za-z_]\w*)(?:\.\w+)*[ \t]+import|import[ \t]+([A-Za-z_]\w*))", re.MULTILINE)


def _foreign_root(view, path: str, text: str) -> Optional[str]:
    """The folder of the project, above the script's own and below the root, from which one
    of the script's absolute imports finds a module that the project's own roots (and the
    script's folder) do not: the root of another project the script was written for. Only
    for a script inside a package (a folder with an `__init__.py`)."""
    here = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(os.path.join(here, "__init__.py")):
        return None
    root = os.path.abspath(view.layout.root)
    layout = view.layout
    for match in _ABSOLUTE_IMPORT.finditer(text):
        top = match.group(1) or match.group(2)
        if layout.module_file(top, path) is not None:
            continue
        folder = os.path.dirname(here)
        while folder.startswith(root + os.sep):
            if layout.lookup(top, [folder]) is not None:
                return folder
            folder = os.path.dirname(folder)
    return None


def _runs_as_script(text: str) -> bool:
    return bool(_MAIN_BLOCK.search(text) or _TOP_LEVEL_RUN.search(text))


def _used_package(view, path: str, namespace: bool = False):
    """The top-level package that holds the file (a folder right under the project's root with
    an `__init__.py`; the folders between may have none, as `llava/train/`), when some project
    file outside that package imports a module of it: a library the project uses. None
    otherwise, also for a package nothing outside imports (the project's own code, run from
    inside)."""
    root = os.path.abspath(view.layout.root)
    relative = os.path.relpath(os.path.abspath(path), root).split(os.sep)
    if len(relative) < 2 or relative[0] in (os.curdir, os.pardir):
        return None
    top = os.path.join(root, relative[0])
    if not (os.path.isfile(os.path.join(top, "__init__.py")) or (namespace and os.path.isdir(top))):
        return None
    key = "\0package\0" + top
    known = view.module_roots.get(key)
    if known is None:
        inside = top + os.sep
        known = any(os.path.abspath(target).startswith(inside)
                    and any(not os.path.abspath(i).startswith(inside) for i in importers)
                    for target, importers in view.import_index().items())
        view.module_roots[key] = known
    return top if known else None


def _loose_module_left_out(view, path: str) -> bool:
    """A file of a folder without `__init__.py` that is no script (no `__main__` block, no run
    at its top level, no command-line parsing), that nothing imports or names, while the
    project imports another module of its folder (`lib/core/pretrain_function.py` beside the
    `lib/core/augment_function.py` the scripts import): a leftover, not a loose module kept for
    anyone to import. Scripts and the other loose files stay roots."""
    if view.layout.installable() or view.importer_paths(path) or not _left_beside_used(view, path):
        return False
    if _import_names(view, path):
        return False  # `from utils.pl_utils import ...` that the index could not resolve
    text = view.text_of(path)
    if _MAIN_BLOCK.search(text) or _TOP_LEVEL_RUN.search(text) or _SCRIPT_TEXT.search(text):
        return False
    return not _named(view, path)


# What makes a file without a `__main__` block a script all the same: options read from the
# command line, or a call at its top level (`setup(...)`, `trainer.fit(model)`).
_SCRIPT_TEXT = re.compile(r"argparse|sys\.argv|parse_args|^[A-Za-z_][\w.]*\(", re.MULTILINE)


def _left_beside_used(view, path: str) -> bool:
    """Nothing imports the module while files outside its folder import another module of it
    (`core/pretrain_function.py` beside the `core/search_function.py` the scripts import), or
    import the package whose `__init__.py` imports some of its modules by name: a module of a
    package the project uses that the project left out, not an API kept for code outside it. A
    package's `__init__.py` is not one."""
    if os.path.basename(path) == "__init__.py":
        return False
    if _USED_FOLDERS not in view.module_roots:
        view.module_roots[_USED_FOLDERS] = True
        index = view.import_index()
        # Packages whose `__init__.py` imports modules of its own folder by name (`from
        # src.trainer.classifer_trainer import ClassifierTrainer`): importing the package from
        # outside uses those modules, and a module it leaves out is left out.
        listing = {os.path.dirname(target) for target, importers in index.items()
                   if os.path.basename(target) != "__init__.py"
                   and os.path.join(os.path.dirname(target), "__init__.py") in importers}
        for target, importers in index.items():
            folder = os.path.dirname(target)
            # Imported from outside its folder: a sibling's import of it says nothing of use.
            if not any(os.path.dirname(i) != folder for i in importers):
                continue
            if os.path.basename(target) != "__init__.py" or folder in listing:
                view.module_roots[_USED_FOLDERS + folder] = True
    return _USED_FOLDERS + os.path.dirname(path) in view.module_roots


def _import_names(view, path: str) -> bool:
    """Some other file's import line names the module by a dotted name its path ends with
    (`from utils.pl_utils import Trainer` for `LightSpeech/utils/pl_utils.py`, `import pl_utils`),
    whatever the import index resolved it to: in a project of several roots (sub-projects run
    from their own folders), such an import may mean this file. A relative import
    (`from .pl_utils import x`) counts from the importer's own folder."""
    stem = module_stem(path)
    target = os.path.splitext(os.path.abspath(path))[0]
    for other in view.files_containing(stem):
        if other == path:
            continue
        for dotted in _imported_modules(view.text_of(other), stem):
            named = dotted.lstrip(".")
            level = len(dotted) - len(named)
            if level:
                base = os.path.dirname(os.path.abspath(other))
                for _ in range(level - 1):
                    base = os.path.dirname(base)
                if os.path.join(base, *named.split(".")) == target:
                    return True
            elif (os.sep + target).endswith(os.sep + os.path.join(*named.split("."))):
                return True
    return False


_IMPORT_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^\n)]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. ,]+)", re.MULTILINE)
_ALIAS = re.compile(r"\s+as\s+\w+")


def _imported_modules(text: str, stem: str) -> List[str]:
    """The dotted module names (relative ones with their leading dots) that an import line of
    ``text`` names and that end with ``stem``: `from a.b import stem` names `a.b.stem`."""
    out: List[str] = []
    for module, names in _IMPORT_FROM.findall(text):
        if module.rstrip(".").split(".")[-1] == stem:
            out.append(module)
        if stem in re.findall(r"\w+", _ALIAS.sub("", names)):
            out.append(module + stem if module.endswith(".") else module + "." + stem)
    for names in _IMPORT.findall(text):
        for name in _ALIAS.sub("", names).split(","):
            name = name.strip()
            if name.split(".")[-1] == stem:
                out.append(name)
    return out


# The key under which `view.module_roots` notes, once per import index, the folders holding a
# module some other project file imports (one key per folder, after this marker).
_USED_FOLDERS = "\0used-folder\0"


def _in_nested_distribution(path: str, root: str) -> bool:
    """A folder between the file and the project's root holds a `setup.py` or `pyproject.toml`
    of its own: a distribution vendored into the project and installed from there."""
    root = os.path.abspath(root)
    folder = os.path.dirname(os.path.abspath(path))
    while folder.startswith(root + os.sep):
        if os.path.isfile(os.path.join(folder, "setup.py")) or os.path.isfile(os.path.join(folder, "pyproject.toml")):
            return True
        folder = os.path.dirname(folder)
    return False


def copy_used_by_project(view, path: str) -> bool:
    """The file sits in a licensed copy, below a folder of the project's own (not right under
    the root), that a file of the project's own code imports from: an importer outside the
    copy that is in no licensed folder itself (not a sibling sub-project of
    a monorepo, TinyCLIP importing TinyViT's model beside it, nor one whose import of a common
    name the index resolved to the copy)."""
    folder = vendored_folder(path, view.layout.root)
    if folder is None or os.path.dirname(folder) == os.path.abspath(view.layout.root):
        # A licensed folder right under the root is a sub-project of a monorepo (AutoML's
        # `CDARTS/`, `TinyViT/`), whose common module names (`lib`) other sub-projects share.
        return False
    key = "\0own-copy\0" + folder
    known = view.module_roots.get(key)
    if known is None:
        inside = folder + os.sep
        root = view.layout.root
        known = any(target.startswith(inside) and any(
            not i.startswith(inside) and vendored_folder(i, root) is None for i in importers)
            for target, importers in view.import_index().items())
        view.module_roots[key] = known
    return known


def used_copy(view, path: str) -> bool:
    """The file sits in a vendored copy (a folder on the way holds a licence of its own) that
    the rest of the project imports from: a library the project uses, whose modules run only
    where the project's imports lead. A folder with a licence that nothing outside it imports
    is a sub-project of its own (a monorepo's `autonomous_driving/<task>/` with its LICENSE):
    its modules nothing imports are its API, as anywhere else."""
    folder = vendored_folder(path, view.layout.root)
    if folder is None:
        return False
    known = view.module_roots.get("\0copy\0" + folder)
    if known is None:
        inside = folder + os.sep
        known = any(target.startswith(inside) and any(not i.startswith(inside) for i in importers)
                    for target, importers in view.import_index().items())
        view.module_roots["\0copy\0" + folder] = known
    return known


# Text of a script that trains: a backward pass, a trainer object, a fit call.
_TRAINS = re.compile(r"\.backward\(|Trainer\(|\.fit\(")


def untrained_package(view, path: str) -> Optional[Tuple[str, ...]]:
    """The training scripts of the package that holds ``path``, when the package is one the
    rest of the project imports from (`_used_package`) and no run of the project reaches any of
    its training scripts (a copy of LLaVA kept to caption images: its `train/train.py` is
    LLaVA's run, not the project's). None otherwise. Then the package's modules run only where
    the project's own code calls them, not in a training run the analysis cannot see."""
    scripts = package_training_scripts(view, path)
    if not scripts:
        return inference_only_importers(view, path)
    key = "\0untrained\0" + os.path.dirname(scripts[0])
    known = view.module_roots.get(key)
    if known is None:
        known = view.module_roots[key] = all(view.unreached(p) for p in scripts)
    return scripts if known else None


# What marks a file that trains or starts a training run through a library (`train_model(...)`
# of OpenMMLab, `trainer.train()`), for the files that import a package.
_STARTS_TRAINING = re.compile(r"\.backward\(|Trainer\(|\.fit\(|\btrain\w*\(")


def inference_only_importers(view, path: str) -> Optional[Tuple[str, ...]]:
    """The project files outside the package that holds ``path`` which import it, directly or
    through each other, when the package is one the rest of the project imports from, it has
    no training code of its own, and none of those files trains or starts a training run
    (HunyuanDiT's LLaVA captioner, imported only by its sampling scripts and apps): then the
    package's modules run only where those calls run them. None otherwise."""
    # A folder without `__init__.py` imported as a namespace package (`from mllm.demo import
    # DialogGen`) counts here: what decides is who imports it.
    package = _used_package(view, path, namespace=True)
    if package is None:
        return None
    key = "\0inference-only\0" + package
    known = view.module_roots.get(key)
    if known is None:
        inside = package + os.sep
        index = view.import_index()
        frontier = [t for t in index if os.path.abspath(t).startswith(inside)]
        seen: set = set()
        while frontier:
            for importer in index.get(frontier.pop(), ()):
                if importer not in seen:
                    seen.add(importer)
                    frontier.append(importer)
        outside = tuple(sorted(p for p in seen if not os.path.abspath(p).startswith(inside)))
        # Training code inside the package (Bunny's `bunny/train/train.py`, an OpenMMLab
        # plugin's `apis/train.py`) makes it the project's own trained code, however its
        # scripts are started.
        trains = not outside or any(_STARTS_TRAINING.search(view.text_of(p)) for p in outside) or any(
            os.path.abspath(p).startswith(inside) and _STARTS_TRAINING.search(view.text_of(p))
            for p in view.layout.files())
        known = view.module_roots[key] = None if trains else outside
    return known


def package_training_scripts(view, path: str) -> Tuple[str, ...]:
    """The scripts that train (a backward pass, a trainer, a fit call) in the package that holds
    ``path``, when the rest of the project imports from that package; () otherwise."""
    package = _used_package(view, path)
    if package is None:
        return ()
    key = "\0training-scripts\0" + package
    known = view.module_roots.get(key)
    if known is None:
        inside = package + os.sep
        known = view.module_roots[key] = tuple(sorted(
            p for p in view.layout.files() if os.path.abspath(p).startswith(inside)
            and _TRAINS.search(view.text_of(p)) and _runs_as_script(view.text_of(p))))
    return known
