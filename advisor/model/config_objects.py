"""Settings objects whose values are written where they are built: `SimpleNamespace(k=4)`,
`argparse.Namespace(k=4)`, an attribute dict (`EasyDict(k=4)`, a dict subclass of the project),
an instance of a dataclass (`TrainConfig()`: the field defaults, or what the call passes), a
class of the project that keeps its keywords and hands them back through `__getattr__`
(`HParams(num_workers=16)`), or a class with class-level settings (`Config.num_workers`,
`Config().num_workers`).

An attribute dict built at the top of a settings module and filled there, statement after
statement (`S = edict(); cfg = S; S.workers = 16`, the layout of many segmentation and
detection repositories), holds what those top-level stores give it: they have all run once the
module is imported. A class that sets the attribute in `__init__`/`__post_init__`, a base class
the analysis cannot read, or a store to the attribute anywhere else (in a function, in another
file, `cfg.num_workers = 0`) leaves the value unknown.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from advisor.model.cli_options import may_set, models_around, namespace_stores
from advisor.model.constants import UNKNOWN, Literals, tag
from advisor.model.containers import DICT_CONTENTS, PRESENT, is_dict_class, literals_of, lookup
from advisor.model.facts import MODULE_SCOPE, ClassInfo, Context
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
    around = models_around(reader, built_in)
    top = _top_stores(source, attr)
    if top and _filled_around(reader, source, top, around):
        return True  # `cfg[k] = v` for each key of a YAML file, `cfg.update(loaded)`
    return any(
        may_set(m, attr) and not (m is built_in and m is not reader and top)
        for m in around
    )


# Methods that put keys into an attribute dict the analysis cannot see.
_FILLING_METHODS = frozenset({"update", "setdefault", "merge_from_file", "merge_from_dict", "merge_from_list"})


def _names_of(source: tuple, stores: list) -> frozenset:
    """The names the object is known by at the top of the module that builds it: the one it is
    built into and the names bound to that one (`S = edict()`, `cfg = S`), and those the
    stores write through; other files import them under the same names."""
    model, call = source[1].model, source[2]
    names = {a.target.split(".")[0] for a in stores}
    top = [(target, found) for (scope, target), found in model.facts.assignments.items()
           if scope == MODULE_SCOPE and "." not in target]
    for _ in range(2):
        for target, found in top:
            if any(a.value is call or (type(a.value) is cst.Name and a.value.value in names) for a in found):
                names.add(target)
    return frozenset(names)


def _filled_around(reader, source: tuple, stores: list, around: list) -> bool:
    """`_fills_by_key` in any file around, once per object and reader (not per attribute)."""
    known = reader.shared("settings-filled-around", lambda m: {})
    key = id(source[2])
    if key not in known:
        names = _names_of(source, stores)
        known[key] = any(_fills_by_key(m, names) for m in around)
    return known[key]


def _fills_by_key(model, names: frozenset) -> bool:
    """The file stores into the object by key or merges a dict into it (`cfg[k] = v` in a loop
    over a loaded config, `cfg.update(yaml_dict)`), under one of the names it is known by."""
    if any(name.split(".")[-1] in names for name in model.facts.item_stores):
        return True
    return any((site.receiver_name or "").split(".")[-1] in names for site in model.method_calls(*_FILLING_METHODS))


def _top_stores(source: tuple, attr: str) -> Optional[list]:
    """The stores `name.attr = value` that fill an attribute dict where it is built, when every
    store of ``attr`` in that file is one of them: at the top of the module, outside any loop,
    onto a name that holds this very object; None otherwise (a store in a function runs at a
    time the analysis does not know). Once per object and attribute: every read asks."""
    if source[0] != "dict":
        return None
    flow, call = source[1], source[2]
    known = flow.model.shared("settings-top-stores", lambda m: {})
    key = (id(call), attr)
    if key not in known:
        known[key] = _find_top_stores(flow, call, attr)
    return known[key]


def _attribute_stores(model) -> dict:
    """Attribute name -> the file's stores `a.attr = v` or `a.b.attr = v` (not `self.attr`),
    indexed once per file."""
    def build(m):
        out: dict = {}
        for (_, target), assignments in m.facts.assignments.items():
            parts = target.split(".")
            if len(parts) >= 2 and not (len(parts) == 2 and parts[0] in ("self", "cls")):
                out.setdefault(parts[-1], []).extend((len(parts), a) for a in assignments)
        return out
    return model.shared("attribute-stores-by-name", build)


def _find_top_stores(flow: ValueFlow, call: cst.Call, attr: str) -> Optional[list]:
    model = flow.model
    stored, anything, _ = namespace_stores(model)
    if anything or not stored.get(attr):
        return None
    found = []
    for depth, a in _attribute_stores(model).get(attr, ()):
        statement = a.statement
        if (depth != 2 or a.augmented or a.ctx.function is not None or a.ctx.loop is not None
                or type(statement) is not cst.Assign or len(statement.targets) != 1):
            return None
        base = statement.targets[0].target
        base = base.value if type(base) is cst.Attribute else None
        sources, _ = flow.ask(SETTINGS, base, a.ctx, a.order) if base is not None else _NONE
        if not any(s[0] == "dict" and s[2] is call for s in sources):
            return None
        found.append(a)
    if len(found) != len(stored[attr]):
        return None  # a `setattr` or a `__dict__` store
    return sorted(found, key=lambda a: a.order)


def _value(source: tuple, attr: str, question: Question[Literals]) -> Literals:
    kind = source[0]
    if kind == "class":
        owner, info = source[1], source[2]
        if may_set(owner, attr):
            return UNKNOWN
        return _class_default(owner, info, attr, question)
    flow, call, ctx, order = source[1], source[2], source[3], source[4]
    stores = _top_stores(source, attr)  # `_set_around` has already ruled out fills by key
    if stores:
        if all(not a.ctx.conditional for a in stores):
            stores = stores[-1:]  # straight-line module code: the last store is the one that stays
        return question.combine([flow.ask(question, a.value, a.ctx, a.order) for a in stores])
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
