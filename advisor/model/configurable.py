"""detectron2's `@configurable` classes: built as `cls(cfg)` (by a registry, out of sight), which
runs the class's `from_config(cfg)` and passes the dict that returns to `__init__` by keyword
(`"criterion": SetCriterion(...)`). What a parameter of such an `__init__` holds is what that
dict holds under its name."""

from __future__ import annotations

from typing import List

from advisor.model.constants import tag
from advisor.model.containers import DICT_CONTENTS, PRESENT, lookup
from advisor.model.facts import FunctionInfo


def configured_argument(model, question, info: FunctionInfo, name: str):
    """The answer to ``question`` for parameter ``name`` of a `@configurable` `__init__`, from
    the dicts its class's `from_config` returns; None when it is not one, or a dict may lack the
    key (the default may hold)."""
    if info.node.name.value != "__init__" or not any(d.rsplit(".", 1)[-1] == "configurable" for d in info.decorators):
        return None
    cls = model.facts.classes.get(info.class_name or "")
    maker = model.bindings.method(cls.scope, "from_config") if cls is not None else None
    if maker is None or not maker.return_sites:
        return None
    answers: List[object] = []
    for returned in maker.return_sites:
        contents = model.values.ask(DICT_CONTENTS, returned.value, returned.ctx, returned.order)
        state, values = lookup(contents, tag(name))
        if state != PRESENT or not values:
            return None
        answers.extend(v.flow.ask(question, v.expr, v.ctx, v.order) for v in values)
    return answers[0] if len(answers) == 1 else question.combine_callers(answers)
