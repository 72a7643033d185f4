"""Classes a registry builds by the name a config gives, where nothing in the project gives
that name: `@BACKBONES.register_module()` on a backbone no config's `type='...'` names, a
detectron2 `@META_ARCH_REGISTRY.register()` meta-architecture no YAML file picks. A registry
builds only what some text names, so what their methods do costs no run of the project
anything, and the engine reports it at info, as for a class nothing builds
(`model/unbuilt_classes.py`).

A registered class counts as named when its registered name (the class name, or the name the
decorator gives: `register_module(name="Conv")`) appears as a word:

- in another Python file of the project, outside import lines, `__all__` lists and
  `super(Name, self)` calls (a config module's `backbone=dict(type="CustomResNet")`, a head's
  default `loss=dict(type="FocalLoss")`, a subclass, a direct construction);
- in its own file, outside its own definition, those lists and calls (a factory dict);
- in a config file, a launch text (README, shell script) or a notebook of the project.

Only classes whose every decorator is a registration are judged (`@X.register_module()`,
`@X.register()`, `@register_x`), and the undecorated top-level classes of a module that picks
one of its classes by a name it is given (`loss_func = globals()[cfg.loss_name](cfg)`), or that
a nearby module looks up by such a name (`getattr(loss_hub, conf["criterion"]["name"])`): there
the class name is the registered name. A package others install (not a vendored copy of one) is left
alone unless it keeps its own runs' configs (a `configs/` folder, `occupancy_configs/`): otherwise its registry serves
its users' configs. So is a project with more config files than are read cheaply.
"""

from __future__ import annotations

import os
import re
from typing import Callable, List, Optional, Tuple

import libcst as cst

from advisor.model.names import dotted_name
from advisor.model.prose import without_prose
from advisor.project.layout import module_stem, vendored

Rows = Callable[[cst.CSTNode], Tuple[int, int]]
CONFIG_FOLDER = re.compile(r"^(?:\w+_)?(?:configs?|cfgs?)$", re.IGNORECASE)  # `configs/`, `occupancy_configs/`
_REGISTRATION = re.compile(r"^register(?:_module|_\w+)?$")
# A registration decorator written above a top-level class (`@BACKBONES.register_module()`): the
# text test that spares the files that only say `register_buffer` the rest of the question.
REGISTERED_CLASS = re.compile(r"^@[\w.]*register(?:_module|_\w+)?\b[^\n]*\n(?:@[^\n]*\n)*class[ \t]+(\w+)", re.MULTILINE)
# Written by hand beside the class: registration, never construction.
# A module that picks one of its own classes by a name it is given (`globals()[cfg.loss_name]`):
# each of its top-level classes is built only where some text gives its name.
PICKED_BY_NAME = re.compile(r"\bglobals\(\)\s*\[\s*(?![\"'])")
_TOP_CLASS = re.compile(r"^class[ \t]+(\w+)", re.MULTILINE)
ALL_LIST = re.compile(r"^__all__\s*(?:\+?=)\s*[\[(][^\])]*[\])]", re.MULTILINE)
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|(?:[^\n\\]*\\\n)*[^\n]*)|import[ \t][^\n]*)",
                          re.MULTILINE)


def unnamed_registered_rows(model, units) -> List[Tuple[int, int]]:
    """The first and last rows of the file's registered classes that nothing names (see the
    module doc). ``units``: the file's (top-level statement, text, first row, last row)."""
    project, path = model.project, model.real_path
    if project is None or path is None:
        return []
    layout = project.layout
    if layout.config_files() is None:
        return []
    if layout.installable() and not vendored(path, layout.root) and not _ships_run_configs(layout):
        return []
    picks = bool(PICKED_BY_NAME.search(model.text or "")) or module_looked_up(model)
    out = []
    for statement, _, first, last in units:
        if type(statement) is not cst.ClassDef or not (statement.decorators or picks):
            continue
        names = registered_names(statement) if statement.decorators else [statement.name.value]
        if names and not any(project.registered_name_used(name, path) for name in names):
            out.append((first, last))
    return out


# Folders of a framework fork where the project keeps its own runs, each a folder of scripts
# that build a model from the package (`playground/detection/coco/yolof/.../net.py`, `exps/`).
_RUN_FOLDER = re.compile(r"^(?:playground|experiments|exps)$", re.IGNORECASE)


def ships_runs(layout) -> bool:
    """The project keeps its own runs at its root: a configs folder (`_ships_run_configs`), or a
    folder of experiments (`playground/`, `experiments/`, `exps/`) holding Python files."""
    if _ships_run_configs(layout):
        return True
    root = layout.root
    return any(_RUN_FOLDER.match(os.path.relpath(path, root).split(os.sep)[0]) for path in layout.files()
               if os.path.relpath(path, root).count(os.sep) >= 1)


def _ships_run_configs(layout) -> bool:
    """The project keeps the configs of its own runs (a `configs/` folder, `occupancy_configs/`): its registries build
    what those name, even where the project is also installable (a detector fork with a
    `setup.py` for its CUDA ops)."""
    return any(CONFIG_FOLDER.match(part) for path in (*layout.files(), *(layout.config_files() or ()))
               for part in os.path.relpath(os.path.dirname(path), layout.root).split(os.sep))


def registered_names(node: cst.ClassDef) -> Optional[List[str]]:
    """The names a class's decorators register it under, when every decorator is a
    registration (`@MODELS.register_module()`, `@HEADS.register_module(name="Head")`,
    `@register_loss`); None otherwise."""
    names: List[str] = []
    for decorator in node.decorators:
        expr = decorator.decorator
        call = expr if type(expr) is cst.Call else None
        func = call.func if call is not None else expr
        dotted = dotted_name(func)
        if dotted is None or not _REGISTRATION.match(dotted.rsplit(".", 1)[-1]):
            return None
        given = _given_names(call) if call is not None else []
        if given is None:
            return None  # a name made at run time: any text may give it
        names.extend(given or [node.name.value])
    return names


def _given_names(call: cst.Call) -> Optional[List[str]]:
    """The names a registration call gives (`register_module("Conv")`, `name=["A", "B"]`): [] for
    none, None for one that is not a literal."""
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value != "name":
            continue  # `force=True`, `module=...`
        value = arg.value
        items = [e.value for e in value.elements] if type(value) in (cst.List, cst.Tuple) else [value]
        found = []
        for item in items:
            if type(item) is not cst.SimpleString or not isinstance(item.evaluated_value, str):
                return None
            found.append(item.evaluated_value)
        return found
    return []


def names_in_code(text: str, name: str, own: bool) -> bool:
    """The Python text names ``name`` somewhere that builds or picks it: not on an import line,
    in an `__all__` list, in `super(Name, self)`, nor on a `class` line that defines a class of
    that name (``own``: the text is the class's own file)."""
    word = re.escape(name)
    code = _IMPORT_LINE.sub("", ALL_LIST.sub("", without_prose(text)))
    code = re.sub(r"\bsuper\(\s*%s\b" % word, "super(", code)
    # Its `class` line, and in another file a class of the same name defined there (a copy of
    # the module in a sibling sub-project): a definition builds nothing.
    code = re.sub(r"^[ \t]*class[ \t]+%s\b" % word, "class ", code, flags=re.MULTILINE)
    return re.search(r"\b%s\b" % word, code) is not None


def classes_asked_for(text: str) -> List[str]:
    """The classes of a module whose construction depends on some text naming them: those a
    registration decorator registers, and every top-level class of a module that picks its
    classes by name from its `globals()`."""
    found = REGISTERED_CLASS.findall(text) if "register" in text else []
    if "globals()" in text and PICKED_BY_NAME.search(text):
        found = sorted(set(found) | set(_TOP_CLASS.findall(text)))
    return found


def module_looked_up(model) -> bool:
    """`looked_up_by_module` for the file's own module and the files its result depends on,
    asked once per file (the unbuilt and the registered classes both need it)."""
    return model.shared("module-looked-up", lambda m: looked_up_by_module(
        m.project, m.real_path, m.project.dependencies(m.real_path)))


def looked_up_by_module(project, path: str, nearby) -> bool:
    """A nearby file reaches the module's classes without naming them: `getattr(losses, name)`,
    `losses.__dict__`, `inspect.getmembers(losses)`, `from losses import *` with a lookup by
    name in the importing module (`globals()[name]`)."""
    stem = module_stem(path)
    word = re.escape(stem)
    aliases = re.compile(r"\b%s\s+as\s+(\w+)" % word)
    for other in nearby:
        text = project.text_of(other)
        if stem not in text:
            continue
        names = [word] + [re.escape(a) for a in aliases.findall(text)]
        either = "(?:%s)" % "|".join(names)
        if re.search(r"\bgetattr\(\s*%s\b|\b%s\.__dict__|getmembers\(\s*%s\b|\bvars\(\s*%s\b" % ((either,) * 4), text):
            return True
        if re.search(r"\b%s\s+import\s+\*" % word, text) and _DYNAMIC_LOOKUP.search(text):
            # `from losses import *`, then `globals()[name]`: any of them may be built. A star
            # import alone brings the names in, and the file's code says which it uses.
            return True
    return False


_DYNAMIC_LOOKUP = re.compile(r"(?<![.\w])(?:globals\(\)|locals\(\)|vars\(\)|eval\(|getattr\(\s*sys\.modules)")
