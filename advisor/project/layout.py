"""Where a file's project is, and which file an import names, the way Python would find it
when the project's scripts run.

A project's root is the nearest folder, from the file up, that holds `pyproject.toml`,
`setup.cfg` or `.git`; a file with none above it is a project of its own folder. Imports are
looked up, in order, in the importing file's own folder (Python puts a script's folder first on
`sys.path`), the root, `src/`, and the package folders `pyproject.toml` or `setup.cfg` name.
"""

from __future__ import annotations

import os
import re

from advisor.discovery import is_python_script
TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the runner reads LISTING from here
    from typing import Dict, List, Optional, Tuple

_MARKERS = ("pyproject.toml", "setup.cfg", ".git")
# Folders that hold tools, dependencies or build output, never the project's own modules.
_SKIPPED = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "env", ".tox", ".nox", "site-packages", "build", "dist",
        "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
        ".ipynb_checkpoints", "wandb",
    }
)
# `where = ["src"]`, `package-dir = {"" = "lib"}` in pyproject.toml; `package_dir = =src` in setup.cfg.
_WHERE = re.compile(r"""^\s*where\s*=\s*\[([^\]]*)\]""", re.MULTILINE)
_PACKAGE_DIR_TOML = re.compile(r"""^\s*package-dir\s*=\s*\{[^}]*""\s*=\s*["']([^"']+)["']""", re.MULTILINE)
_PACKAGE_DIR_CFG = re.compile(r"""^\s*package_dir\s*=\s*(?:\n\s*)?=\s*(\S+)""", re.MULTILINE)
# `.conf`: HOCON settings (pyhocon), as neural-rendering projects write them.
_CONFIG_NAMES = (".yaml", ".yml", ".json", ".toml", ".conf")
_MAX_FILES = 20_000  # a project larger than this is looked at through its imports only
# Where a project writes the commands that run its scripts (model/launched_options.py).
_SCRIPTS = (".sh", ".bash")
_DOCUMENTS = (".md",)


def project_root(path: str, named: Tuple[str, ...] = ()) -> str:
    """The folder of the file's project (see the module docstring). With no marker above the
    file, the deepest of the ``named`` folders (those the command line names) that holds it:
    `advisor check repo/` on an unpacked archive reads `repo/` as one project."""
    folder = os.path.dirname(os.path.abspath(path))
    current = folder
    while True:
        if any(os.path.exists(os.path.join(current, marker)) for marker in _MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    holding = [n for n in named if folder == n or folder.startswith(n.rstrip(os.sep) + os.sep)]
    return max(holding, key=len) if holding else folder


def _read(path: str) -> str:
    from advisor.limits import FileTooLarge, read_regular

    try:
        return read_regular(path, 1 << 20)[0].decode("utf-8", "replace")
    except (OSError, ValueError, FileTooLarge):
        return ""


def source_roots(root: str) -> List[str]:
    """The folders absolute imports start from, besides the importing file's own."""
    roots = [root]
    src = os.path.join(root, "src")
    if os.path.isdir(src):
        roots.append(src)
    for match in _WHERE.finditer(_read(os.path.join(root, "pyproject.toml"))):
        for item in re.findall(r"""["']([^"']+)["']""", match.group(1)):
            roots.append(os.path.normpath(os.path.join(root, item)))
    for pattern, name in ((_PACKAGE_DIR_TOML, "pyproject.toml"), (_PACKAGE_DIR_CFG, "setup.cfg")):
        match = pattern.search(_read(os.path.join(root, name)))
        if match:
            roots.append(os.path.normpath(os.path.join(root, match.group(1))))
    out: List[str] = []
    for folder in roots:
        if os.path.isdir(folder) and folder not in out:
            out.append(folder)
    return out


def module_stem(path: str) -> str:
    """The last part of the dotted name a file is imported by: `losses` for `pkg/losses.py`,
    `pkg` for `pkg/__init__.py`."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem


# A result's dependency that stands for the project's list of files (see ``listing_digest``).
LISTING = "\0listing\0"
# Not config files: runs write JSON and YAML beside the code (results, logs), and each would
# invalidate every cached result of the project.
_LISTED = (".py", ".ipynb", ".sh", ".bash", ".md")


def listing_digest(root: str) -> str:
    """A digest of the names of the project's files that can change a finding elsewhere: Python
    modules, notebooks, launch scripts and Markdown documents (a README's commands). A file added, removed or renamed (a new
    training script that imports a loss module) changes it, and with it every cached result of
    the project; their contents are each result's own dependencies."""
    import hashlib

    names: List[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs
            if d not in _SKIPPED and not d.startswith(".") and not os.path.isfile(os.path.join(folder, d, "pyvenv.cfg"))
        )
        names.extend(os.path.relpath(os.path.join(folder, n), root) for n in sorted(files) if n.endswith(_LISTED))
        if len(names) > _MAX_FILES:
            break
    return hashlib.sha256("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def pseudo_digest(dependency: str) -> Optional[str]:
    """The digest of a dependency that is no file (it starts with NUL, as no path can)."""
    return listing_digest(dependency[len(LISTING):]) if dependency.startswith(LISTING) else None


class Layout:
    """One project: its root, where imports are looked up, and its Python files."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.roots = source_roots(root)
        self._found: Dict[tuple, Optional[str]] = {}
        self._files: Optional[List[str]] = None
        self._notebooks: List[str] = []
        self._scripts: List[str] = []
        self._documents: List[str] = []
        self._configs = None  # a list, or False when there are too many
        self._installable: Optional[bool] = None

    def module_file(self, module: str, importer: str, extra: Tuple[str, ...] = ()) -> Optional[str]:
        """The file an absolute import of ``module`` loads when ``importer`` runs, if it is one
        of the project's (a module file or a package's `__init__.py`). ``extra``: folders the
        importer adds to `sys.path` itself (`sys.path.append('core')`)."""
        here = os.path.dirname(os.path.abspath(importer))
        key = (module, here, extra)
        if key not in self._found:
            found = self.lookup(module, [here, *self.roots, *extra])
            if found is None:
                # `from data.custom_dataset_data_loader import ...` inside `Global/data/`: the
                # scripts beside the package (`Global/train.py`) run with its parent folder on
                # the path, and every module of their run finds the package's siblings there.
                above = _package_parent(here)
                if above is not None and above != here and above not in self.roots:
                    found = self.lookup(module, [above])
            head, _, rest = module.partition(".")
            if found is None and rest and head == os.path.basename(self.root):
                # The repository is the package, run from its parent folder: `import
                # mae_st.util.misc` inside a clone named mae_st.
                found = self.lookup(rest, [self.root])
            self._found[key] = found
        return self._found[key]

    def relative_file(self, module: str, level: int, importer: str) -> Optional[str]:
        """The file `from .module import ...` (``level`` dots) names, seen from ``importer``."""
        base = os.path.dirname(os.path.abspath(importer))
        for _ in range(level - 1):
            base = os.path.dirname(base)
        if not module:
            init = os.path.join(base, "__init__.py")
            return init if os.path.isfile(init) else None
        return self.lookup(module, [base])

    @staticmethod
    def lookup(module: str, folders: List[str]) -> Optional[str]:
        parts = module.split(".")
        for folder in folders:
            base = os.path.join(folder, *parts)
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(candidate):
                    return os.path.normpath(candidate)
        return None

    def module_name(self, path: str) -> Optional[str]:
        """The dotted name the file is imported by from the nearest source root."""
        path = os.path.abspath(path)
        best: Optional[str] = None
        for root in self.roots:
            if path.startswith(root + os.sep):
                relative = os.path.relpath(path, root)
                if best is None or len(relative) < len(best):
                    best = relative
        if best is None:
            return None
        parts = best[: -len(".py")].split(os.sep) if best.endswith(".py") else best.split(os.sep)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None

    def installable(self) -> bool:
        """The project is a distribution others install (a `setup.py`, a `[project]` or Poetry
        table in `pyproject.toml`, `[options]` in `setup.cfg`): its packages are an API, and
        what they define is built by code outside the project."""
        if self._installable is None:
            self._installable = os.path.isfile(os.path.join(self.root, "setup.py")) or any(
                mark in _read(os.path.join(self.root, name))
                for name, mark in (("pyproject.toml", "[project]"), ("pyproject.toml", "[tool.poetry]"), ("setup.cfg", "[options]"))
            )
        return self._installable

    def config_files(self, limit: int = 512) -> Optional[List[str]]:
        """The project's config files (YAML, JSON, TOML), in the folders `files` walks; None when
        there are more than ``limit`` (a dataset's annotations, not settings)."""
        if self._configs is None:
            out: Optional[List[str]] = []
            for folder, dirs, names in os.walk(self.root):
                dirs[:] = sorted(
                    d for d in dirs
                    if d not in _SKIPPED and not d.startswith(".")
                    and not os.path.isfile(os.path.join(folder, d, "pyvenv.cfg"))
                )
                out.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(_CONFIG_NAMES))
                if len(out) > limit:
                    out = None
                    break
            self._configs = out if out is not None else False
        return self._configs if self._configs is not False else None

    def files(self) -> List[str]:
        """The project's Python files (tools, dependencies and build output left out)."""
        if self._files is None:
            out: List[str] = []
            notebooks: List[str] = []
            scripts: List[str] = []
            documents: List[str] = []
            for folder, dirs, names in os.walk(self.root):
                dirs[:] = sorted(
                    d for d in dirs
                    if d not in _SKIPPED and not d.startswith(".")
                    and not os.path.isfile(os.path.join(folder, d, "pyvenv.cfg"))
                )
                # Also a script without a suffix that runs Python (`./train`, discovery.py).
                out.extend(os.path.join(folder, n) for n in sorted(names)
                           if n.endswith(".py") or ("." not in n and is_python_script(os.path.join(folder, n))))
                notebooks.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".ipynb"))
                scripts.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(_SCRIPTS))
                documents.extend(os.path.join(folder, n) for n in sorted(names)
                                 if n.endswith(_DOCUMENTS) and (folder == self.root or n.upper().startswith("README")
                                                                or os.path.dirname(folder) == self.root
                                                                and os.path.basename(folder).lower() in _DOC_FOLDERS))
                if len(out) > _MAX_FILES:
                    out, notebooks, scripts, documents = [], [], [], []
                    break
                del notebooks[_MAX_FILES:]  # a folder of thousands of notebooks adds no more
            self._files, self._notebooks = out, notebooks
            self._scripts, self._documents = scripts, documents
        return self._files

    def launch_texts(self, limit: int = 128) -> Optional[List[str]]:
        """The project's shell scripts, its READMEs and the Markdown documents at its root or in a
        documentation folder there (`docs/TRAINING.md`), found
        by the same walk as ``files``: the commands that run its scripts, and the options they
        pass. None when there are more than ``limit`` (they can no longer be read cheaply)."""
        self.files()
        found = self._scripts + self._documents
        return found if len(found) <= limit else None

    def notebooks(self) -> List[str]:
        """The project's notebooks, found by the same walk as ``files``: their code calls the
        project's functions (`training.pass_epoch(...)` in `examples/finetune.ipynb`), though
        nothing imports them."""
        self.files()
        return self._notebooks


# Folders at the root whose documents say how the project is run (`docs/TRAINING.md`).
_DOC_FOLDERS = frozenset({"docs", "doc", "documentation"})

_LICENSE = re.compile(r"^(LICEN[CS]E|COPYING)(\.\w+)?$", re.IGNORECASE)


def vendored(path: str, root: str) -> bool:
    """A folder between the file and the project's root holds a licence of its own: third-party
    code copied into the project (`libraries/mingpt/LICENSE`), whose classes only the project's
    own code builds."""
    return vendored_folder(path, root) is not None


def vendored_folder(path: str, root: str) -> Optional[str]:
    """The nearest folder between the file and the project's root that holds a licence of its
    own, if any."""
    root = os.path.abspath(root)
    folder = os.path.dirname(os.path.abspath(path))
    while folder.startswith(root) and folder != root:
        try:
            if any(_LICENSE.match(name) for name in os.listdir(folder)):
                return folder
        except OSError:
            return None
        folder = os.path.dirname(folder)
    return None


def _package_parent(folder: str) -> Optional[str]:
    """The folder above the outermost package that holds ``folder`` (a folder with an
    `__init__.py`, and those above it that have one too); None when ``folder`` is no package."""
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return None
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder

