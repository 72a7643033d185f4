"""Which files a run checks: Python files and Jupyter notebooks under the given paths, minus what
is never user code."""

from __future__ import annotations

import errno
import os
import stat as stat_module
from pathlib import Path

from advisor.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Callable, Iterator, List, Optional, Sequence, Set, Tuple, Union

    PathLike = Union[str, Path]
    # (path as found, is it a folder) -> whether `exclude` names it
    Excluded = Callable[[str, bool], bool]

# Folders that hold tools, dependencies or build output rather than the project's own code.
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "site-packages", "build", "dist",
        "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
        ".ipynb_checkpoints",
    }
)

# What a folder walk picks up (explicit paths are always checked).
NOTEBOOK_SUFFIX = ".ipynb"
CHECKED_SUFFIXES = (".py", NOTEBOOK_SUFFIX)


class Discovered(Value):
    """One file to check. Immutable."""

    __slots__ = ("name", "explicit", "stat")
    _fields = __slots__
    __hash__ = Value.value_hash

    def __init__(self, name: str, explicit: bool, stat: Optional[os.stat_result] = None) -> None:
        self.name = name  # the path as given, or as found under a folder that was given
        self.explicit = explicit  # named on the command line (checked even without a .py suffix)
        # The file's stat, taken before anything reads it (the stat index compares it), or None
        # when it could not be taken (a dangling link: the analysis then reports it unreadable).
        self.stat = stat

    @property
    def path(self) -> Path:
        return Path(self.name)


def is_python_script(path: str) -> bool:
    """A file without a suffix whose first line runs Python (`#!/usr/bin/python3`, `#!/usr/bin/env
    python`): a script run as `./train`, as pre-commit's file types count it. Only its first
    bytes are read; anything unreadable is no script."""
    try:
        if not stat_module.S_ISREG(os.stat(path).st_mode):
            return False  # a named pipe or a device: opening it could wait forever
        with open(path, "rb") as handle:
            head = handle.read(_SHEBANG_BYTES)
    except (OSError, ValueError):
        return False
    if not head.startswith(b"#!"):
        return False
    return b"python" in head.split(b"\n", 1)[0]


_SHEBANG_BYTES = 128


def is_notebook(path: PathLike) -> bool:
    """Path(path).suffix.lower() == ".ipynb", without building a Path ("x/.ipynb" has no suffix)."""
    name = os.path.basename(os.fspath(path))
    return len(name) > len(NOTEBOOK_SUFFIX) and name[-len(NOTEBOOK_SUFFIX):].lower() == NOTEBOOK_SUFFIX


def _is_virtualenv(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg"))


def discover(
    paths: Sequence[PathLike],
    excluded: Optional[Excluded],
    on_missing: Callable[[PathLike], None],
) -> Iterator[Discovered]:
    """Yields files in a stable order; a missing path is reported and the others still run."""
    seen: Set[Any] = set()
    for path in paths:
        st = stat_or_none(path)
        if path_problem(path, st) is not None:
            on_missing(path)
            continue
        yield from discover_root(path, st, excluded, seen)  # type: ignore[arg-type]


def display_name(path: PathLike) -> str:
    """The path as pathlib would print it ("./a//b.py" -> "a/b.py"): the name a file's findings
    carry. Most names need no change, and a run over thousands of named files should not build
    a Path for each just to find that out."""
    if isinstance(path, Path):
        return str(path)
    if os.sep == "/" and path and path != "." and "//" not in path and not path.endswith(("/", "/.")) \
            and not path.startswith("./") and "/./" not in path:
        return path
    return str(Path(path))


def stat_or_none(path: PathLike) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None


def path_problem(path: PathLike, st: Optional[os.stat_result]) -> Optional[str]:
    """Why a path named on the command line cannot be checked ("no such file or folder",
    "symlink loop", "not a regular file (a named pipe)"), or None for a file or a folder.
    ``st``: its stat, None when it could not be taken."""
    if st is not None:
        if stat_module.S_ISREG(st.st_mode) or stat_module.S_ISDIR(st.st_mode):
            return None
        from advisor.limits import kind_of

        return f"not a regular file ({kind_of(st.st_mode)})"  # reading it could block, or never end
    try:
        os.stat(path)
    except ValueError:
        return "not a valid file name (it holds a NUL character)"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            if os.path.islink(path):
                return "broken symlink (what it points to does not exist)"
            return "no such file or folder"
        return f"cannot open: {exc.strerror or exc}"
    return "no such file or folder"  # it appeared meanwhile: reported as it was


def discover_root(path: PathLike, st: os.stat_result, excluded: Optional[Excluded],
                  seen: Set[Any], ignore_files: bool = False) -> Iterator[Discovered]:
    """The files of one path the user gave, ``st`` being its stat; ``excluded`` (None: nothing
    is) is asked about what a folder walk meets, with whether it is a folder. With
    ``ignore_files``, the walk also leaves out what .gitignore, .ignore and git's excludes name
    (advisor.ignore_files).

    A file reached twice (named twice, through a symbolic link, or both named and under a named
    folder) is checked once: ``seen`` holds what identifies every file yielded so far.
    """
    name = display_name(path)
    if stat_module.S_ISREG(st.st_mode):
        key = _identity(name, st)
        if key not in seen:
            seen.add(key)
            yield Discovered(name, True, st)
        return
    if not stat_module.S_ISDIR(st.st_mode):
        return  # a device or a pipe: reading it could block, and it is no source file
    for found, found_st in _walk(name, excluded, ignore_files):
        key = _identity(found, found_st) if found_st is not None else found
        if key not in seen:
            seen.add(key)
            yield Discovered(found, False, found_st)


def _identity(name: str, st: os.stat_result) -> Any:
    """Device and inode: one stat, where a realpath costs one per folder level. A file with
    hard links is told by its real path instead: each of its names is a file of its own to the
    user, and may be under another configuration."""
    if st.st_nlink > 1:
        return os.path.realpath(name)
    return (st.st_dev, st.st_ino)


def _walk(root: str, excluded: Optional[Excluded],
          ignore_files: bool = False) -> Iterator[Tuple[str, Optional[os.stat_result]]]:
    """(path as found, its stat or None when it cannot be taken)."""
    ignores = None
    if ignore_files:
        from advisor.ignore_files import IgnoreFiles

        absolute_root = os.path.abspath(root)
        cut = 0 if root == "." else len(root) + (0 if root.endswith("/") else 1)
        ignores = IgnoreFiles.above(absolute_root)

        def absolute(found: str) -> str:  # the walk's names are relative to where it started
            return os.path.join(absolute_root, found[cut:]) if found != root else absolute_root
    stack: List[Tuple[str, Any]] = [(root, ignores)]
    visited_dirs = set()
    while stack:
        folder, ignores = stack.pop()
        try:
            real = os.path.realpath(folder)
        except (OSError, ValueError):
            continue
        if real in visited_dirs:  # symlink loops
            continue
        visited_dirs.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        if ignores is not None:
            ignores = ignores.entering(absolute(folder), [e.name for e in entries])
            if ignores.empty:
                ignored = None
            else:
                ignored = ignores.ignored
        else:
            ignored = None
        subfolders: List[str] = []
        for entry in entries:
            path = entry.name if folder == "." else entry.path  # "a.py", not "./a.py"
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIPPED_DIRS or entry.name.endswith(".egg-info") or _is_virtualenv(path):
                    continue
                if excluded is not None and excluded(path, True):
                    continue
                if ignored is not None and ignored(absolute(path), True):
                    continue
                subfolders.append(path)
            elif entry.name.startswith("._"):
                continue  # macOS AppleDouble metadata beside a copied `main.py`, not Python
            elif ((entry.name.endswith(CHECKED_SUFFIXES) or ("." not in entry.name and is_python_script(path)))
                  and not (excluded is not None and excluded(path, False))):
                if ignored is not None and ignored(absolute(path), False):
                    continue
                try:
                    st: Optional[os.stat_result] = entry.stat()
                except OSError:
                    st = None  # a dangling link: reported as unreadable
                if st is not None and not stat_module.S_ISREG(st.st_mode):
                    continue  # a pipe or a device named *.py
                yield path, st
        stack.extend((sub, ignores) for sub in reversed(subfolders))
