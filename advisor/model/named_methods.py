"""The project's methods of a given name, for calls the call graph cannot resolve.

`self.metrics.should_log(step)` on an object a config built, `collate_fn=dataset.collate` on a
dataset a factory returns: the receiver's class is not known, but the project's own methods of
that name are. A question that holds for every one of them holds for the call. Only the file's
own methods and those of the project files its answers already depend on are read, so a cached
answer goes stale with them."""

from __future__ import annotations

import os
from typing import Dict, List, Set, Tuple


def project_methods_named(model, name: str) -> List[Tuple[object, object]]:
    """(model, FunctionInfo) of every method called ``name`` in this file and the project files
    near it (memoised per file)."""
    memo = model.shared("named-methods", lambda m: {})
    found = memo.get(name)
    if found is None:
        found = memo[name] = _methods(model, name)
    return found


def _methods(model, name: str):
    found = [(model, info) for info in model.facts.functions.values()
             if info.class_name is not None and info.node.name.value == name]
    project = model.project
    if project is None or model.real_path is None:
        return found
    nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(model.real_path)}
    for path in sorted(project.files_containing(f"def {name}(")):
        if os.path.normpath(os.path.abspath(path)) not in nearby:
            continue
        other = project.model(path)
        if other is None or other is model:
            continue
        found.extend((other, info) for info in other.facts.functions.values()
                     if info.class_name is not None and info.node.name.value == name)
    return found


def method_family(model, name: str) -> List[Tuple[object, object]]:
    """The project's methods called ``name`` near the file, when they form one class
    hierarchy: one class defines it and every other class that does derives from that one
    (`Algo.log_info`, overridden by `BC`, `CQL`, ...). A call of that name on an object the
    analysis cannot type (a model an algorithm factory builds from a registry) runs one of them.
    Empty when the name is also defined by unrelated classes (memoised per file)."""
    memo = model.shared("method-families", lambda m: {})
    found = memo.get(name)
    if found is None:
        found = memo[name] = _family(project_methods_named(model, name))
    return found


def _family(methods):
    if not methods or len(methods) > _MAX_FAMILY:
        return []
    owners = {info.class_name for _, info in methods}
    bases: Dict[str, Set[str]] = {}
    for owner in {id(m): m for m, _ in methods}.values():
        for cls in owner.facts.classes.values():
            bases.setdefault(cls.name, set()).update(b.rsplit(".", 1)[-1] for b in cls.bases)
    roots = [name for name in owners if not (_ancestors(name, bases) & (owners - {name}))]
    return list(methods) if len(roots) == 1 else []


def _ancestors(name: str, bases: Dict[str, Set[str]]) -> Set[str]:
    seen: Set[str] = set()
    stack = list(bases.get(name, ()))
    while stack:
        current = stack.pop()
        if current in seen or current == name:
            continue
        seen.add(current)
        stack.extend(bases.get(current, ()))
    return seen


# More methods of one name than this is no family of overrides but a common name.
_MAX_FAMILY = 32
