"""Folders a script adds to `sys.path`, read from its text: where its bare imports may be found.

Two spellings are read, both common in research code that is run as a script from its folder:
- a literal, relative to where the script is run (its own folder, the folder above it, or the
  project root):
  `sys.path.append("core")`, `sys.path.insert(0, "../lib")`;
- a folder named from the file's own place: `os.path.join(os.path.dirname(__file__), "..",
  "lib")`, or a name bound to `osp.dirname(osp.abspath(__file__))` and then joined, as the
  `_init_paths.py` helpers of many detection and pose repositories do (the script imports that
  helper first, and the folder is on the path for its other imports).

Only folders that exist count. The join is not followed into `sys.path` itself: in a file that
mentions `sys.path` at all, a folder joined from the file's place is taken as added (a data
folder named that way costs nothing: no module is looked for there that it does not hold).
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Tuple

_PATH_ADDITION = re.compile(r"""sys\.path\.(?:append|insert)\(\s*(?:-?\d+\s*,\s*)?[rRuU]?['"]([^'"\n]+)['"]\s*\)""")

# `os.path.dirname(os.path.abspath(__file__))` and its variants: each `dirname` goes one folder up
# from the file itself; `abspath`/`realpath` change nothing here.
_PATH_MODULE = r"(?:os\.path|osp|path)"
_FILE_PLACE = re.compile(
    rf"((?:{_PATH_MODULE}\.(?:dirname|abspath|realpath)\(\s*)+)__file__((?:\s*\))+)"
)
_PLACE_NAME = re.compile(rf"^[ \t]*(\w+)[ \t]*=[ \t]*({_FILE_PLACE.pattern})[ \t]*(?:#.*)?$", re.MULTILINE)
_LITERALS = r"""((?:\s*,\s*[rRuU]?['"][^'"\n]*['"])+)"""
_STRING = re.compile(r"""['"]([^'"\n]*)['"]""")


def path_additions(text: str, path: str, root: str) -> Tuple[str, ...]:
    """The existing folders a file's `sys.path` additions name (only for a text that says
    `sys.path`)."""
    if "sys.path" not in text:
        return ()
    found: List[str] = []
    here = os.path.dirname(os.path.abspath(path))
    for match in _PATH_ADDITION.finditer(text):
        folder = match.group(1)
        # Run from its folder, from the folder above it (`cd code; python training/run.py`
        # with `sys.path.append("../code")`), or from the root.
        for base in (here, os.path.dirname(here), root):
            _add(found, os.path.join(base, folder))
    if "__file__" in text:
        for folder in _file_relative(text, os.path.abspath(path)):
            _add(found, folder)
    return tuple(found)


def _add(found: List[str], candidate: str) -> None:
    candidate = os.path.normpath(candidate)
    if candidate not in found and os.path.isdir(candidate):
        found.append(candidate)


def _place(prefix: str, file: str) -> str:
    """The place a `dirname(...)` chain around `__file__` names (the file itself without one)."""
    place = file
    for _ in range(prefix.count("dirname(")):
        place = os.path.dirname(place)
    return place


def _file_relative(text: str, file: str) -> List[str]:
    places: Dict[str, str] = {}
    for match in _PLACE_NAME.finditer(text):
        places[match.group(1)] = _place(match.group(3), file)
    bases = [re.escape(name) for name in places]
    inline = _FILE_PLACE.pattern
    base = f"(?:{'|'.join(bases)}|{inline})" if bases else inline
    joined = re.compile(rf"{_PATH_MODULE}\.join\(\s*({base}){_LITERALS}\s*\)")
    folders: List[str] = []
    for match in joined.finditer(text):
        head = match.group(1)
        start = places.get(head)
        if start is None:
            inner = _FILE_PLACE.match(head)
            if inner is None:
                continue
            start = _place(inner.group(1), file)
        parts = _STRING.findall(match.group(match.lastindex))
        folders.append(os.path.join(start, *parts))
    # `sys.path.append(f"{here}/../lib")` and `sys.path.append(here + "/../lib")`: the place
    # named, then the literal rest as a relative path.
    for pattern in (_formatted(base), _concatenated(base)):
        for match in pattern.finditer(text):
            start = _named_place(match.group(1), places, file)
            rest = match.group(match.lastindex).strip("/\\")
            if start is not None and rest:
                folders.append(os.path.join(start, rest))
    # `sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))`, or a name bound to one.
    direct = re.compile(rf"sys\.path\.(?:append|insert)\(\s*(?:-?\d+\s*,\s*)?({base})\s*\)")
    for match in direct.finditer(text):
        start = _named_place(match.group(1), places, file)
        if start is not None:
            folders.append(start)
    return folders


_ADDS = r"sys\.path\.(?:append|insert)\(\s*(?:-?\d+\s*,\s*)?"


def _formatted(base: str) -> "re.Pattern[str]":
    """`sys.path.append(f"{place}/rest")`."""
    return re.compile(rf"""{_ADDS}[fF][rR]?['"]\{{\s*({base})\s*\}}([^'"{{}}\n]*)['"]\s*\)""")


def _concatenated(base: str) -> "re.Pattern[str]":
    """`sys.path.append(place + "/rest")`."""
    return re.compile(rf"""{_ADDS}({base})\s*\+\s*[rRuU]?['"]([^'"\n]*)['"]\s*\)""")


def _named_place(head: str, places: Dict[str, str], file: str):
    """The folder a name bound to the file's place, or an inline `dirname(__file__)` chain, names."""
    start = places.get(head)
    if start is not None:
        return start
    inner = _FILE_PLACE.match(head)
    return None if inner is None else _place(inner.group(1), file)
