"""Flags that keep their constructor's false default on every path the project can take.

`if self.with_cp and x.requires_grad:` in a block built by a registry, or `if self.immiscible:`
in a library class whose subclass forwards `*args, **kwargs` to it: the value flow cannot follow
the constructions (there are none it can see, or they pass spreads on), so it does not know the
flag. It is still off unless something in the project turns it on. This fact answers that from
the texts: the attribute is set only in `__init__`, from a parameter of the same name or one
whose default is false, and no file of the project near this one (the files a cached answer
depends on) gives that name anything but a false constant or the name passed on as it is
(`with_cp=with_cp`). A command-line option (`with_cp=args.with_cp`), a config value, a
positional-looking `setattr(m, "with_cp", flag)`: anything else may turn it on.
"""

from __future__ import annotations

import os
import re
from typing import Dict

import libcst as cst

from advisor.model.names import dotted_name
from advisor.model.value_flow import parameter_default

_STRINGS = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
# What a false setting looks like where it is written: Python's and the config formats'.
_FALSE = frozenset({"False", "None", "0", "0.0", '""', "''", "false", "null"})


def keeps_false_default(model, expr: cst.BaseExpression) -> bool:
    """``expr`` is `self.<flag>` that no run of the project turns on (see the module doc)."""
    name = dotted_name(expr)
    if name is None or not name.startswith("self.") or name.count(".") != 1:
        return False
    known: Dict[str, bool] = model.shared("default-flags", lambda m: {})
    answer = known.get(name)
    if answer is None:
        answer = known[name] = _keeps_false_default(model, name)
    return answer


def _keeps_false_default(model, name: str) -> bool:
    attribute = name.partition(".")[2]
    passed = {attribute}
    stores = [a for (_, target), found in model.facts.assignments.items() if target == name for a in found]
    if not stores:
        return False
    for store in stores:
        info = store.ctx.function
        value = store.value
        if info is None or info.node.name.value != "__init__" or type(value) is not cst.Name or store.augmented:
            return False
        if value.value not in info.params:
            return False
        default = parameter_default(info, value.value)
        if default is None or _text(default) not in _FALSE:
            return False
        passed.add(value.value)
    return all(_never_given_true(model, word, passed) for word in passed)


def _text(expr: cst.BaseExpression) -> str:
    if type(expr) is cst.Name or type(expr) in (cst.Integer, cst.Float):
        return expr.value
    if type(expr) is cst.SimpleString:
        return expr.value if expr.value in ('""', "''") else "?"
    return "?"


def _never_given_true(model, word: str, passed) -> bool:
    """No text near this file gives ``word`` a value other than a false constant or one of the
    names in ``passed`` handed on as it is: as an attribute, a keyword, a default, a dict key
    or through `setattr`."""
    escaped = re.escape(word)
    # `.with_cp = v`, `with_cp=v`, `with_cp: bool = v`, `with_cp |= v`
    set_code = re.compile(r"(?<![\w])\.?%s\s*(?::[^=\n]*)?([-+*/|&]?=)(?!=)\s*([^\s,)\]}#;]*)" % escaped)
    # `{"with_cp": v}`, `setattr(m, "with_cp", v)`, `getattr(cfg, "with_cp", False)`
    keyed = re.compile(r"['\"]%s['\"]\s*[:,]\s*([^\s,)\]}#;]*)" % escaped)

    def sets_true(text: str) -> bool:
        for match in set_code.finditer(_STRINGS.sub('""', text)):
            operator, value = match.group(1), match.group(2)
            if operator != "=" or (value not in _FALSE and value not in passed):
                return True
        return any(value not in _FALSE and value not in passed for value in keyed.findall(text))

    if sets_true(model.text or ""):
        return False
    project = model.project
    if project is None or model.real_path is None:
        return True
    # Only the files a cached answer depends on, so that a cached answer and a fresh one agree.
    nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(model.real_path)}
    for path in project.files_containing(word):
        if os.path.normpath(os.path.abspath(path)) in nearby and sets_true(project.text_of(path)):
            return False
    return True

