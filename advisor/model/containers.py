"""What a call receives through `**kwargs`: the keys of the dict it unpacks, when the dict is
built where the file shows it (`{...}`, `dict(...)`, a name bound once to one of them)."""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from advisor.model.facts import CallSite
from advisor.model.names import dotted_name

ABSENT, PRESENT, UNKNOWN = "absent", "present", "unknown"


def kwargs_value(model, site: CallSite, key: str) -> Tuple[str, Optional[cst.BaseExpression]]:
    """Looks ``key`` up in the call's `**kwargs`: (ABSENT | PRESENT | UNKNOWN, value)."""
    for arg in site.node.args:
        if arg.star != "**":
            continue
        value: Optional[cst.BaseExpression] = arg.value
        if not isinstance(value, (cst.Dict, cst.Call)):
            name = dotted_name(arg.value)
            found = model.assignments(name, site.ctx) if name else []
            if len(found) != 1 or (site.ctx.scope, name) in model.facts.subscript_stores:
                return UNKNOWN, None
            if any(s.receiver_name == name for s in model.method_calls("update", "setdefault")):
                return UNKNOWN, None
            value = found[0].value
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if not isinstance(element, cst.DictElement):
                    return UNKNOWN, None  # `{**base, ...}`
                if isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key:
                    return PRESENT, element.value
        elif isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
            for a in value.args:
                if a.keyword is None:
                    return UNKNOWN, None
                if a.keyword.value == key:
                    return PRESENT, a.value
        else:
            return UNKNOWN, None
    return ABSENT, None
