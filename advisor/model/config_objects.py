"""Settings objects whose values are written where they are built: `SimpleNamespace(k=4)`,
`argparse.Namespace(k=4)`, an attribute dict (`EasyDict(k=4)`, a dict subclass of the project),
an instance of a dataclass (`TrainConfig()`: the field defaults, or what the call passes), a
class of the project that keeps its keywords and hands them back through `__getattr__`
(`HParams(num_workers=16)`), or a class with class-level settings (`Config.num_workers`,
`Config().num_workers`).

A class that sets the attribute in `__init__`/`__post_init__`, a base class the analysis cannot
read, or a store to the attribute elsewhere (`cfg.num_workers = 0`) leaves the value unknown.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from advisor.model.cli_options import may_set, models_around
from advisor.model.constants import UNKNOWN, Literals, tag
from advisor.model.containers import DICT_CONTENTS, PRESENT, is_dict_class, literals_of, lookup
from advisor.model.facts import ClassInfo, Context
from advisor.model.value_flow import Question, ValueFlow, argument

_NAMESPACES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})
_ATTRIBUTE_DICTS = frozenset({"easydict.EasyDict", "addict.Dict"})

# A source: ("keywords", flow, call), ("dict", flow, call, ctx, order), ("instance", flow, call,
# owner model, ClassInfo), ("class", owner model, ClassInfo).
Sources = Tuple[Tuple[tuple, ...], bool]
_NONE: Sources = ((), False)


class SettingsObjects(Question[Sources]):
    key = "settings-objects"
    unknown = _NONE
    follows_imports = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Sources]:
        model = flow.model
        if type(expr) is cst.Call:
            qual = model.imports.qualify(expr.func)
            if qual in _NAMESPACES:
                return (("keywords", flow, expr, ctx, order),), True
            if qual in _ATTRIBUTE_DICTS:
                return (("dict", flow, expr, ctx, order),), True
            found = _class_of(model, expr.func, qual, ctx, order)
            if found is not None:
                owner, info = found
                if is_dict_class(owner, info):
                    return (("dict", flow, expr, ctx, order),), True
                if _keyword_bag(owner, info):
                    return (("keywords", flow, expr, ctx, order),), True
                return (("instance", flow, expr, ctx, order, owner, info),), True
            return _NONE if qual is not None else None
        if type(expr) is cst.Name:
            if not flow.bindings.reaching(expr.value, ctx, order):
                found = _class_of(model, expr, model.imports.qualify(expr), ctx, order)
                if found is not None:
                    return (("class",) + found,), True
            return None
        if type(expr) in (cst.Attribute, cst.IfExp):
            return None
        return _NONE

    def combine(self, answers: Sequence[Sources]) -> Sources:
        found: List[tuple] = []
        for sources, _ in answers:
            found.extend(s for s in sources if all(s is not f for f in found))
        return tuple(found), all(exhaustive for _, exhaustive in answers)


SETTINGS = SettingsObjects()


def _class_of(model, func: cst.BaseExpression, qual: Optional[str], ctx: Context, order: int):
    """(model, ClassInfo) of a class of the file or of the project that ``func`` names."""
    if qual is not None:
        symbol = model.symbol(qual)
        if symbol is not None and symbol.kind == "class":
            return symbol.model, symbol.info
        return None
    if type(func) is cst.Name and func.value in model.facts.classes:
        if model.bindings.function(func.value, ctx, order) is None:
            return model, model.facts.classes[func.value]
    return None


def setting_values(
    flow: ValueFlow, question: Question[Literals], receiver: cst.BaseExpression, attr: str, ctx: Context, order: int
) -> Optional[Literals]:
    """What `receiver.attr` holds when ``receiver`` is a settings object built where the file
    (or the project) shows it; None when it is not one."""
    sources, exhaustive = flow.ask(SETTINGS, receiver, ctx, order)
    if not sources:
        return None
    if not exhaustive or may_set(flow.model, attr):
        return UNKNOWN  # the file that reads it may also set it (`CFG.num_workers = 8` in a setup function)
    answers = [
        UNKNOWN if _set_around(flow.model, source, attr) else _value(source, attr, question) for source in sources
    ]
    return answers[0] if len(answers) == 1 else question.combine(answers)


def _set_around(reader, source: tuple, attr: str) -> bool:
    """A file next to the one that builds the object (one that imports it: a shared settings
    module's users) may set the attribute, at a time the analysis does not know."""
    built_in = source[1] if source[0] == "class" else source[1].model
    return any(may_set(m, attr) for m in models_around(reader, built_in))


def _value(source: tuple, attr: str, question: Question[Literals]) -> Literals:
    kind = source[0]
    if kind == "class":
        owner, info = source[1], source[2]
        if may_set(owner, attr):
            return UNKNOWN
        return _class_default(owner, info, attr, question)
    flow, call, ctx, order = source[1], source[2], source[3], source[4]
    if may_set(flow.model, attr):
        return UNKNOWN
    if kind == "dict":
        state, values = lookup(flow.ask(DICT_CONTENTS, call, ctx, order), tag(attr))
        return literals_of(question, values) if state == PRESENT else UNKNOWN
    if kind == "keywords":
        for arg in call.args:
            if arg.star:
                return UNKNOWN
            if arg.keyword is not None and arg.keyword.value == attr:
                return flow.ask(question, arg.value, ctx, order)
        return UNKNOWN
    owner, info = source[5], source[6]
    if may_set(owner, attr):
        return UNKNOWN
    fields = _fields(info)
    if fields is None:
        if call.args or info.bases or owner.bindings.method(info.scope, "__init__") is not None:
            return UNKNOWN  # not a dataclass: its __init__ decides
        return _class_default(owner, info, attr, question)  # `Config()` of a class of settings
    if any(a.star for a in call.args):
        return UNKNOWN
    position = fields.index(attr) if attr in fields else None
    given = argument(call, attr, position)
    if given is not None:
        return flow.ask(question, given.value, ctx, order)
    return _class_default(owner, info, attr, question)


def _keyword_bag(owner, info: ClassInfo) -> bool:
    """A class of the project that keeps the keywords it is built with and hands them back as
    attributes: `__init__(self, **kwargs)` and a `__getattr__` (the `HParams(num_workers=16,
    ...)` of speech and GAN repositories), with no method that stores a key given to it at run
    time (`set_hparam(key, value)`) called anywhere in the file that builds it."""
    known = owner.shared("keyword-bags", lambda m: {})
    if info.scope not in known:
        known[info.scope] = _keeps_keywords(owner, info)
    return known[info.scope]


def _keeps_keywords(owner, info: ClassInfo) -> bool:
    init = owner.bindings.method(info.scope, "__init__")
    if init is None or owner.bindings.method(info.scope, "__getattr__") is None:
        return False
    params = init.node.params
    if (params.star_kwarg is None or isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.kwonly_params
            or len(params.params) != 1):
        return False
    setters = [found.node.name.value for found in owner.facts.functions.values()
               if found.class_name == info.name and found.node.name.value not in ("__init__", "__getattr__")
               and len(found.params) >= 3]
    return not any(owner.method_calls(name) for name in setters)


def _is_dataclass(info: ClassInfo) -> bool:
    for decorator in info.node.decorators:
        expr = decorator.decorator
        if type(expr) is cst.Call:
            expr = expr.func
        name = expr.attr.value if type(expr) is cst.Attribute else getattr(expr, "value", "")
        if name in ("dataclass", "dataclasses"):
            return True
    return False


def _fields(info: ClassInfo) -> Optional[List[str]]:
    """A dataclass's own fields, in order; None for another class, or one with a base (whose
    fields come first and may not be readable)."""
    if not _is_dataclass(info) or info.bases:
        return None
    return [
        small.target.value
        for small in _class_statements(info)
        if type(small) is cst.AnnAssign and type(small.target) is cst.Name
    ]


def _class_statements(info: ClassInfo):
    body = info.node.body
    for line in body.body if type(body) is cst.IndentedBlock else ():
        if type(line) is cst.SimpleStatementLine:
            yield from line.body


def _class_default(owner, info: ClassInfo, attr: str, question: Question[Literals]) -> Literals:
    """The value a class body gives ``attr`` (`num_workers: int = 4`, `num_workers = 4`,
    `field(default=4)`), when no method of it sets `self.attr` and no base may."""
    if info.bases and not _is_dataclass(info):
        return UNKNOWN
    if owner.facts.assignments.get((info.scope, f"self.{attr}")):
        return UNKNOWN
    value = None
    for small in _class_statements(info):
        if type(small) is cst.AnnAssign and type(small.target) is cst.Name and small.target.value == attr:
            value = small.value
        elif type(small) is cst.Assign and any(
            type(t.target) is cst.Name and t.target.value == attr for t in small.targets
        ):
            value = small.value
    if value is None:
        return UNKNOWN
    if type(value) is cst.Call and (owner.imports.qualify(value.func) or "").endswith("field"):
        default = argument(value, "default", None)
        if default is None:
            return UNKNOWN  # `default_factory=`
        value = default.value
    ctx = info_ctx(owner, info)
    return owner.values.ask(question, value, ctx, owner.order_of(value))


def info_ctx(owner, info: ClassInfo) -> Context:
    """The context the class body's statements read names in (the module's, for a class at the
    top of its file)."""
    for defs in owner.facts.function_defs.values():
        for function in defs:
            if function.class_scope == info.scope and function.ctx is not None:
                return function.ctx
    return Context()
