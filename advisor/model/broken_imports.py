"""Files that cannot be imported as they stand: a top-level `from .trainer_utils import X` whose
module is missing from the file's folder. Such a file is a copy vendored from a library (a
Hugging Face `trainer.py` dropped into a training repository) that nothing can run: Python stops
at the import. What it would cost is not what the project's runs cost.

Read from the text, so that the project view can make the missing paths dependencies of the
file's cached result (a path that does not exist keeps the result out of the cache: adding the
module changes the answer at once)."""

from __future__ import annotations

import os
import re
from typing import FrozenSet, List

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


def unimportable(model) -> bool:
    """A relative import at the top level of the module names a module its folder lacks (only
    for a file of a project, whose cached result depends on those paths)."""
    return model.shared("unimportable", _unimportable)


def _unimportable(model) -> bool:
    if model.project is None or model.real_path is None:
        return False
    return bool(missing_relative_modules(model.real_path, model.text or ""))
