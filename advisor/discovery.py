"""Which files a run checks: Python files and Jupyter notebooks under the given paths, minus what
is never user code."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

# Folders that hold tools, dependencies or build output rather than the project's own code.
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "site-packages", "build", "dist",
        "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs",
        ".ipynb_checkpoints",
    }
)

# What a folder walk picks up (explicit paths are always checked).
CHECKED_SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Discovered:
    path: Path
    explicit: bool  # named on the command line (checked even without a .py suffix)


def _is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def discover(
    paths: List[Path],
    excluded: Callable[[Path], bool],
    on_missing: Callable[[Path], None],
) -> Iterator[Discovered]:
    """Yields files in a stable order; a missing path is reported and the others still run."""
    seen = set()
    for path in paths:
        if not path.exists():
            on_missing(path)
            continue
        if path.is_file():
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                yield Discovered(path, explicit=True)
            continue
        for found, key in _walk(path, excluded):
            if key not in seen:
                seen.add(key)
                yield Discovered(found, explicit=False)


def _walk(root: Path, excluded: Callable[[Path], bool]) -> Iterator[Tuple[Path, Path]]:
    """(path as found, its real path): the real folder joined with the name, unless the file
    itself is a link (one realpath per folder, not per file)."""
    stack: List[Path] = [root]
    visited_dirs = set()
    while stack:
        folder = stack.pop()
        try:
            real = folder.resolve()
        except OSError:
            continue
        if real in visited_dirs:  # symlink loops
            continue
        visited_dirs.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        subfolders: List[Path] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIPPED_DIRS or entry.name.endswith(".egg-info") or _is_virtualenv(path):
                    continue
                if excluded(path):
                    continue
                subfolders.append(path)
            elif entry.name.endswith(CHECKED_SUFFIXES) and not excluded(path):
                try:
                    key = path.resolve() if entry.is_symlink() else real / entry.name
                except OSError:
                    continue
                yield path, key
        stack.extend(reversed(subfolders))
