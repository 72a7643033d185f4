"""The torch release a project ships with, where it pins one exactly: `torch==1.13.1` in a
requirements file, `setup.py`, `pyproject.toml`, a conda environment (`pytorch=1.10.1`), a
Dockerfile, an install command of a README, or an item of a README's list of the environment it
ran in (`- PyTorch = 1.9.1`). A rule whose advice depends on the release
(an API deprecated only from a later one) reads it; several pins give the oldest."""

from __future__ import annotations

import os
import re
from typing import Iterable, List, Optional, Tuple

# `torch==1.13.1`, `torch == 2.0.1+cu118`, conda's `pytorch=1.10.1`; not `torchvision==`.
_PIN = re.compile(r"(?<![\w.-])(?:py)?torch\s*={1,2}\s*(\d+)\.(\d+)")
_REQUIREMENTS = re.compile(r"^(?:requirements.*\.txt|setup\.py|setup\.cfg|pyproject\.toml|environment.*\.ya?ml|"
                           r"Dockerfile.*|.*\.dockerfile)$", re.IGNORECASE)
# `torch>=1.13.1`, `torch >= 1.8`: the oldest release a project declares it supports.
_MINIMUM = re.compile(r"(?<![\w.-])(?:py)?torch\s*>=\s*(\d+)\.(\d+)")
# Folders of the root whose files are read too (`requirements/base.txt`, `docker/Dockerfile`).
_FOLDERS = frozenset({"requirements", "docker", "env", "envs", "environment", "install"})


def pin_files(root: str) -> List[str]:
    """The files at the root (and in its requirement and docker folders) that may pin torch."""
    out: List[str] = []
    for folder in [root] + [os.path.join(root, name) for name in _FOLDERS]:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        out.extend(os.path.join(folder, n) for n in names
                   if _REQUIREMENTS.match(n) or (folder != root and n.endswith(".txt")))
    return out[:64]


# An install command of a README or a shell script (prose that names a release pins nothing).
_INSTALL = re.compile(r"^.*\b(?:pip3?|conda|mamba|uv pip)\s+install\b.*$", re.MULTILINE)
# An item of a README's list of the environment it was run in (`- PyTorch = 1.9.1`): the
# release written with `=`, as a pin is, not a sentence that mentions one.
_LISTED = re.compile(r"^[ \t]*[-*+][ \t]*(?:py)?torch[ \t]*={1,2}[ \t]*(\d+)\.(\d+)", re.MULTILINE | re.IGNORECASE)


def oldest_pin(texts: Iterable[str], commands: Iterable[str] = ()) -> Optional[Tuple[int, int]]:
    """The oldest exact torch pin among ``texts`` (requirement files, Dockerfiles, conda
    environments) and the install command lines of ``commands`` (READMEs, shell scripts);
    None without one."""
    commands = list(commands)
    lines = [line.group(0) for text in commands for line in _INSTALL.finditer(text)]
    texts = list(texts)
    found = [(int(m.group(1)), int(m.group(2))) for text in [*texts, *lines] for m in _PIN.finditer(text)]
    found += [(int(m.group(1)), int(m.group(2))) for text in commands for m in _LISTED.finditer(text)]
    found += [release for text in texts for operator, release in _poetry_requirements(text) if operator in ("", "==")]
    return min(found) if found else None


def oldest_minimum(files: Iterable[Tuple[str, str]]) -> Optional[Tuple[int, int]]:
    """The oldest torch release that a project's own dependencies accept as a lower bound
    (`torch>=1.13.1`), from (path, text) pairs of its requirement files; None without one. Only
    what every install needs counts: a requirements file, `install_requires` of `setup.py` or
    `setup.cfg`, the `dependencies` of a `pyproject.toml`; not an optional extra (a
    `measure = ["torch>=2.1"]` of a tool that runs without torch)."""
    found: List[Tuple[int, int]] = []
    for path, text in files:
        name = os.path.basename(path).lower()
        if name.startswith("requirements") and name.endswith(".txt"):
            parts = [text]
        elif name == "pyproject.toml":
            parts = _DEPENDENCIES.findall(text)
            found.extend(release for _, release in _poetry_requirements(text))
        elif name in ("setup.py", "setup.cfg"):
            parts = _INSTALL_REQUIRES.findall(text)
        else:
            continue
        found.extend((int(m.group(1)), int(m.group(2))) for part in parts for m in _MINIMUM.finditer(part))
    return min(found) if found else None


# `dependencies = [...]` of a `[project]` table (each line of the array up to its closing bracket).
_DEPENDENCIES = re.compile(r"^dependencies\s*=\s*\[(.*?)^\s*\]", re.MULTILINE | re.DOTALL)
# `install_requires=[...]` of setup.py, or the indented lines after `install_requires =` of setup.cfg.
_INSTALL_REQUIRES = re.compile(r"install_requires\s*=\s*(\[[^\]]*\]|(?:\n[ \t]+\S[^\n]*)+)")


# Poetry's `[tool.poetry.dependencies]` table: `torch = "^2.2"`, `torch = "2.2.1"`, or
# `torch = { version = "2.2.1+cu121", source = "torchcu121" }`. A bare release or `==` pins it;
# `^`, `~` and `>=` give the oldest release accepted.
_POETRY_TABLE = re.compile(r"^\[tool\.poetry\.dependencies\][^\n]*\n(.*?)(?=^\[|\Z)", re.MULTILINE | re.DOTALL)
_POETRY_TORCH = re.compile(r'^[ \t]*"?(?:py)?torch"?[ \t]*=[ \t]*(?:\{[^}\n]*?\bversion[ \t]*=[ \t]*)?"[ \t]*'
                           r'(==|\^|~=|~|>=|)[ \t]*(\d+)\.(\d+)', re.MULTILINE)


def _poetry_requirements(text: str) -> List[Tuple[str, Tuple[int, int]]]:
    """(operator, release) of each torch requirement in the main dependencies of a Poetry
    project (not its development groups)."""
    return [(m.group(1), (int(m.group(2)), int(m.group(3))))
            for table in _POETRY_TABLE.findall(text) for m in _POETRY_TORCH.finditer(table)]
