"""What a dict holds, key by key, and on which paths.

A dict is read where it is built (`{...}`, `dict(...)`, `{**base, "k": v}`, `dict(base, k=v)`,
`base.copy()`, a `**kwargs` parameter from its callers' extra keywords) and then changed in
steps: `d.update(...)`, `d.setdefault(k, v)`, `d[k] = v`, `d.pop(k)`, `del d[k]`, `d.clear()`.
A change counts for a read when the binding it changes reaches both; a change made under an
`if` holds only on that `if`'s path, and a test that holds exactly on the GPU (`if use_cuda:`,
`cuda_tests.py`) puts the key on the CUDA path, the one the input-pipeline rules judge. A change
made in another function, or a dict handed to a function of the project (which may change it),
makes the answer incomplete.

An answer is a few variants (the dict as each reaching binding built it), each a map from key to
entry (the value expressions, and on which path the key is there) and whether the map is
complete (no key the analysis could not read).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from advisor.model.constants import UNKNOWN as UNKNOWN_LITERALS, Literals, Tagged, constant, identity_with_string, tag
from advisor.model.cuda_tests import cuda_test
from advisor.model.facts import Assignment, CallSite, Context, FunctionInfo, bound_element
from advisor.model.names import dotted_name
from advisor.model.value_flow import ABSENT, PRESENT, SOMETIMES, UNKNOWN, Question, ValueFlow

# When an entry is there.
ALWAYS, ON_CUDA, ON_HOST, MAYBE = "always", "cuda", "host", "maybe"

_DICT_BUILDERS = frozenset({"dict", "collections.OrderedDict", "easydict.EasyDict", "addict.Dict"})
_COPIES = frozenset({"copy.copy", "copy.deepcopy"})
_MUTATORS = ("update", "setdefault", "pop", "popitem", "clear")
_MAX_VARIANTS = 8
_MODULE_END = float("inf")  # the order of a read made once a module has run


class Value:
    """A value expression, and where (in which file's flow) to ask about it."""

    __slots__ = ("expr", "ctx", "order", "flow")

    def __init__(self, expr: cst.BaseExpression, ctx: Context, order: float, flow: ValueFlow) -> None:
        self.expr, self.ctx, self.order, self.flow = expr, ctx, order, flow


class Entry:
    __slots__ = ("values", "when")

    def __init__(self, values: Tuple[Value, ...], when: str) -> None:
        self.values = values
        self.when = when


class Variant:
    __slots__ = ("entries", "complete", "path")

    def __init__(self, entries: Dict[Tagged, Entry], complete: bool, path: Optional[str] = None) -> None:
        self.entries = entries
        self.complete = complete
        self.path = path  # ON_CUDA / ON_HOST: the dict is built this way on that path only

    def copy(self) -> "Variant":
        return Variant(dict(self.entries), self.complete, self.path)


Contents = Tuple[Variant, ...]
_UNKNOWN: Contents = (Variant({}, False),)


def _when(outer: str, inner: str) -> str:
    """An entry that is there on path ``inner`` of a change made on path ``outer``."""
    if outer == ALWAYS:
        return inner
    if inner == ALWAYS or inner == outer:
        return outer
    return MAYBE


# The most dicts of a table (`presets[name]`) looked into for one read.
_MAX_ITEMS_FOLLOWED = 32


class DictContents(Question[Contents]):
    key = "dict-contents"
    unknown = _UNKNOWN
    follows_imports = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Contents]:
        if type(expr) is cst.Dict:
            return (self._literal(flow, expr, ctx, order),)
        if type(expr) is cst.Call:
            return self._call(flow, expr, ctx, order)
        if type(expr) is cst.IfExp:
            decided = identity_with_string(expr.test)
            if decided is not None:
                # `{"pin_memory": True} if device.type is 'cuda' else {}`: never the first.
                return flow.ask(self, expr.body if decided else expr.orelse, ctx, order)
            on_gpu = cuda_test(flow.model, expr.test)
            if on_gpu is None:
                return None
            body, orelse = (ON_CUDA, ON_HOST) if on_gpu else (ON_HOST, ON_CUDA)
            return _on_path(flow.ask(self, expr.body, ctx, order), body) + _on_path(
                flow.ask(self, expr.orelse, ctx, order), orelse
            )
        if type(expr) is cst.Subscript:
            return self._item(flow, expr, ctx, order)
        name = dotted_name(expr)
        if name is not None:
            return self._name(flow, name, ctx, order)
        return _UNKNOWN

    def _item(self, flow: ValueFlow, expr: cst.Subscript, ctx: Context, order: int) -> Contents:
        """`settings[name]` of a table of dicts (`SwinTransformer(**model_para_dict[name])`):
        the dict under a known key, else any of them."""
        if len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
            return _UNKNOWN
        outer = flow.ask(self, expr.value, ctx, order)
        if not outer or not all(v.complete for v in outer):
            return _UNKNOWN
        key = constant(flow.model, expr.slice[0].slice.value)
        values: List[Value] = []
        for variant in outer:
            if key is None:
                values.extend(v for entry in variant.entries.values() for v in entry.values)
            elif key in variant.entries:
                values.extend(variant.entries[key].values)
            else:
                return _UNKNOWN
        if not values or len(values) > _MAX_ITEMS_FOLLOWED:
            return _UNKNOWN
        return self.combine([v.flow.ask(self, v.expr, v.ctx, v.order) for v in values])

    def combine(self, answers: Sequence[Contents]) -> Contents:
        variants = [v for answer in answers for v in answer]
        if len(variants) <= _MAX_VARIANTS:
            return tuple(variants)
        merged = Variant({}, all(v.complete for v in variants))
        for variant in variants:
            for key, entry in variant.entries.items():
                old = merged.entries.get(key)
                values = entry.values if old is None else old.values + entry.values
                merged.entries[key] = Entry(values, MAYBE)
        return (merged,)

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> Contents:
        return _UNKNOWN

    def augmented(self, flow: ValueFlow, assignment: Assignment, before: Contents, value: Contents) -> Contents:
        return tuple(_merged(b, value, ALWAYS) for b in before)  # `d |= {...}`

    # -- where a dict is built -------------------------------------------------------------
    def _literal(self, flow: ValueFlow, node: cst.Dict, ctx: Context, order: int) -> Variant:
        variant = Variant({}, True)
        for element in node.elements:
            if type(element) is cst.StarredDictElement:
                variant = _merged(variant, flow.ask(self, element.value, ctx, order), ALWAYS)
                continue
            key = constant(flow.model, element.key)
            if key is None:
                variant.complete = False
                continue
            variant.entries[key] = Entry((Value(element.value, ctx, order, flow),), ALWAYS)
        return variant

    def _call(self, flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> Optional[Contents]:
        model = flow.model
        func = call.func
        qual = model.imports.qualify(func)
        if qual in _COPIES and len(call.args) >= 1:
            return flow.ask(self, call.args[0].value, ctx, order)
        if type(func) is cst.Attribute and func.attr.value == "copy" and not call.args and qual is None:
            return flow.ask(self, func.value, ctx, order)
        if not self._builds_dict(flow, call, qual, ctx, order):
            return None if qual is None else _UNKNOWN  # a helper's return; a library's result
        return (self.arguments(flow, call.args, ctx, order),)

    def arguments(self, flow: ValueFlow, args: Sequence[cst.Arg], ctx: Context, order: int) -> Variant:
        """The dict `dict(*args)` builds (and `d.update(*args)` lays over `d`)."""
        variant = Variant({}, True)
        for arg in args:
            if arg.star == "*":
                variant.complete = False
            elif arg.keyword is None:
                variant = _merged(variant, flow.ask(self, arg.value, ctx, order), ALWAYS)
            elif arg.star == "":
                variant.entries[tag(arg.keyword.value)] = Entry((Value(arg.value, ctx, order, flow),), ALWAYS)
        for arg in args:
            if arg.star == "**":
                variant = _merged(variant, flow.ask(self, arg.value, ctx, order), ALWAYS)
        return variant

    def _builds_dict(self, flow: ValueFlow, call: cst.Call, qual: Optional[str], ctx: Context, order: int) -> bool:
        model = flow.model
        func = call.func
        if qual is not None:
            if qual in _DICT_BUILDERS:
                return True
            symbol = model.symbol(qual)
            return symbol is not None and symbol.kind == "class" and is_dict_class(symbol.model, symbol.info)
        if type(func) is cst.Name:
            if func.value == "dict":
                return flow.bindings.function("dict", ctx, order) is None
            info = model.facts.classes.get(func.value)
            return info is not None and is_dict_class(model, info)
        return False

    # -- a name: its bindings, and the changes made to each since ----------------------------
    def _name(self, flow: ValueFlow, name: str, ctx: Context, order: int) -> Contents:
        reach = flow.bindings.reaching(name, ctx, order)
        answers: List[Contents] = []
        for assignment in reach.assignments:
            built = flow.assigned(self, assignment)
            answers.append(self._changed(flow, name, built, assignment, None, ctx, order))
        if reach.parameter is not None:
            built = flow.passed(self, reach.parameter, name)
            answers.append(self._changed(flow, name, built, None, reach.parameter, ctx, order))
        elif not reach.assignments and ctx.function is not None and _star_kwargs(ctx.function) == name:
            built = self._extra_keywords(flow, ctx.function)
            answers.append(self._changed(flow, name, built, None, ctx.function, ctx, order))
        if not answers:
            imported = self._imported(flow, name)
            if imported is None:
                return _UNKNOWN
            return self._changed(flow, name, imported, None, None, ctx, order)
        if not reach.closed and reach.assignments:
            answers.append(_UNKNOWN)
        return answers[0] if len(answers) == 1 else self.combine(answers)

    def _imported(self, flow: ValueFlow, name: str) -> Optional[Contents]:
        """A dict bound at the top of another module of the project (`from settings import
        LOADER_KWARGS`): as that module leaves it, with the changes its top level makes."""
        qual = flow.model.imports.qualify_dotted(name)
        symbol = flow.model.symbol(qual) if qual is not None else None
        if symbol is None or symbol.kind != "value":
            return None
        owner = symbol.model.values
        reach = owner.bindings.module_end(symbol.name)
        end = Context()
        answers = [
            self._changed(owner, symbol.name, owner.assigned(self, a), a, None, end, _MODULE_END)
            for a in reach.assignments
        ]
        if not reach.closed or not answers:
            answers.append(_UNKNOWN)
        found = answers[0] if len(answers) == 1 else self.combine(answers)
        if _changed_around(flow.model, symbol.model, symbol.name):
            found = tuple(_unsure(v) for v in found)
        return found

    def _extra_keywords(self, flow: ValueFlow, info: FunctionInfo) -> Contents:
        """`def build(ds, **kwargs)`: the keywords its callers pass that no parameter takes."""
        answers: List[Contents] = []
        for model, site in flow.model.callers(info):
            variant = Variant({}, True)
            for arg in site.node.args:
                if arg.star == "**":
                    variant = _merged(variant, model.values.ask(self, arg.value, site.ctx, site.order), ALWAYS)
                elif arg.keyword is not None and arg.keyword.value not in info.params:
                    key = tag(arg.keyword.value)
                    variant.entries[key] = Entry((Value(arg.value, site.ctx, site.order, model.values),), ALWAYS)
            answers.append((variant,))
        return self.combine(answers) if answers else _UNKNOWN

    def _changed(
        self, flow: ValueFlow, name: str, built: Contents, binding: Optional[Assignment],
        parameter: Optional[FunctionInfo], ctx: Context, order: int,
    ) -> Contents:
        """``built`` after the changes that the read at ``order`` sees made to that binding."""
        changes = _changes(flow.model, name)
        if not changes:
            return built
        variants = [v.copy() for v in built]
        # A dict imported from another module: its changes here are seen from the top.
        start = binding.ctx if binding is not None else parameter.body_ctx if parameter is not None else None
        for change in changes:
            if not _changes_binding(flow, name, change, binding, parameter):
                continue
            if change.kind == "escape" and not flow.model.calls.targets(change.node):
                continue  # handed to a library function or a builtin: left as it is
            if change.ctx.scope != ctx.scope or change.order >= order:
                if change.ctx.scope != ctx.scope:
                    variants = [_unsure(v) for v in variants]  # run at a time the analysis does not know
                continue
            when = _path_between(flow.model, start, change.ctx, ctx)
            variants = [change.apply(self, flow, v, when, ctx, order) for v in variants]
        return tuple(variants)


DICT_CONTENTS = DictContents()


def _on_path(contents: Contents, path: str) -> Contents:
    return tuple(Variant(v.entries, v.complete, path if v.path is None else v.path) for v in contents)


def _merged(variant: Variant, other: Contents, when: str) -> Variant:
    """``variant`` with the entries of ``other`` laid over it, on path ``when``."""
    out = variant.copy()
    single = len(other) == 1
    for source in other:
        if not source.complete:
            # Keys the analysis cannot read may replace any that were there.
            out = _unsure(out)
        for key, entry in source.entries.items():
            entry_when = _when(when, entry.when if single else MAYBE)
            old = out.entries.get(key)
            if old is None:
                out.entries[key] = Entry(entry.values, entry_when)
            elif entry_when == ALWAYS:
                out.entries[key] = Entry(entry.values, ALWAYS)
            else:
                kept = old.when if old.when == ALWAYS or old.when == entry_when else MAYBE
                out.entries[key] = Entry(old.values + entry.values, kept)
    return out


def is_dict_class(model, info, depth: int = 0) -> bool:
    """A class of the project that derives from dict (an attribute-access dict: `EasyDict`)."""
    for base in info.bases:
        if base in ("dict", "collections.OrderedDict") or base in _DICT_BUILDERS:
            return True
        if depth < 3:
            local = model.facts.classes.get(base)
            if local is not None and local is not info and is_dict_class(model, local, depth + 1):
                return True
    return False


def _star_kwargs(info: FunctionInfo) -> Optional[str]:
    star = info.node.params.star_kwarg
    return star.name.value if star is not None else None


# -- the changes made to a dict after it is built -----------------------------------------------
class _Change:
    __slots__ = ("ctx", "order", "kind", "node")

    def __init__(self, ctx: Context, order: int, kind: str, node) -> None:
        self.ctx, self.order, self.kind, self.node = ctx, order, kind, node

    def apply(
        self, question: DictContents, flow: ValueFlow, variant: Variant, when: str, read_ctx: Context, read_order: float
    ) -> Variant:
        kind, node, ctx, order = self.kind, self.node, self.ctx, self.order
        if kind == "escape":
            return _unsure(variant)  # a function of the project may change it
        if kind == "attribute":
            # `c.key = value` on an attribute-access dict (`EasyDict`): the key holds what `c.key`
            # holds where the dict is read, with the changes made to that value since
            # (`c.key.workers = 4`).
            key, target = node
            value = Value(target, read_ctx, read_order, flow)
            return _merged(variant, (Variant({tag(key): Entry((value,), ALWAYS)}, True),), when)
        if kind == "store":
            return _store(flow, variant, node.key, node.value, when, ctx, order)
        call: cst.Call = node.node
        method = node.method
        if method == "update":
            if any(a.star == "*" for a in call.args):
                variant.complete = False
                return variant
            return _merged(variant, (question.arguments(flow, call.args, ctx, order),), when)
        if method == "setdefault" and call.args and call.args[0].keyword is None:
            key = constant(flow.model, call.args[0].value)
            if key is None:
                variant.complete = False
            elif key not in variant.entries or variant.entries[key].when != ALWAYS:
                value = call.args[1].value if len(call.args) > 1 else cst.Name("None")
                return _merged(variant, (Variant({key: Entry((Value(value, ctx, order, flow),), ALWAYS)}, True),), when)
            return variant
        if method == "pop" and call.args and call.args[0].keyword is None:
            return _remove(flow, variant, call.args[0].value, when)
        if method in ("clear", "popitem"):
            if when == ALWAYS and method == "clear":
                return Variant({}, variant.complete, variant.path)
            for key, entry in list(variant.entries.items()):
                variant.entries[key] = Entry(entry.values, MAYBE)
            return variant
        variant.complete = False
        return variant


def _unsure(variant: Variant) -> Variant:
    """The dict after a change nobody can read: any key may be there, with any value."""
    return Variant({k: Entry(e.values, MAYBE) for k, e in variant.entries.items()}, False, variant.path)


def _store(flow: ValueFlow, variant: Variant, key_expr, value, when: str, ctx: Context, order: int) -> Variant:
    if value is None:
        return _remove(flow, variant, key_expr, when)
    key = constant(flow.model, key_expr)
    if key is None:
        variant.complete = False
        return variant
    return _merged(variant, (Variant({key: Entry((Value(value, ctx, order, flow),), ALWAYS)}, True),), when)


def _remove(flow: ValueFlow, variant: Variant, key_expr, when: str) -> Variant:
    key = constant(flow.model, key_expr)
    if key is None:
        for name, entry in list(variant.entries.items()):
            variant.entries[name] = Entry(entry.values, MAYBE)
        return variant
    entry = variant.entries.get(key)
    if entry is not None:
        if when == ALWAYS:
            del variant.entries[key]
        else:
            variant.entries[key] = Entry(entry.values, MAYBE)
    return variant


def _changed_around(reader, owner, name: str) -> bool:
    """Another file next to the module that binds ``name`` (one that imports it) changes a
    dict of that name, at a time the analysis does not know."""
    from advisor.model.cli_options import models_around  # cli_options reads dicts too

    for model in models_around(reader, owner):
        if model is owner or model is reader:
            continue
        index = model.shared("dict-changes", _index_changes)
        if any(key == name or key.endswith("." + name) for key in index):
            return True
    return False


def _changes(model, name: str) -> List[_Change]:
    """Every change of the file made to a dict held by ``name``, in source order."""
    index = model.shared("dict-changes", _index_changes)
    return index.get(name, [])


def _index_changes(model) -> Dict[str, List[_Change]]:
    out: Dict[str, List[_Change]] = {}
    for method in _MUTATORS:
        for site in model.method_calls(method):
            if site.receiver_name is not None:
                out.setdefault(site.receiver_name, []).append(_Change(site.ctx, site.order, "call", site))
    for name, stores in model.facts.item_stores.items():
        for store in stores:
            out.setdefault(name, []).append(_Change(store.ctx, store.order, "store", store))
    for site in model.facts.calls:
        if site.qualname is not None or site.method in _MUTATORS:
            continue  # a library call does not change the user's dict
        for arg in site.node.args:
            if arg.star != "**":
                name = dotted_name(arg.value)
                if name is not None:
                    out.setdefault(name, []).append(_Change(site.ctx, site.order, "escape", site))
    for (_, target), assignments in model.facts.assignments.items():
        base, dot, key = target.rpartition(".")
        if not dot or base == "self":
            continue
        for assignment in assignments:
            node = _attribute_target(assignment)
            if node is not None:
                out.setdefault(base, []).append(_Change(assignment.ctx, assignment.order, "attribute", (key, node)))
    for changes in out.values():
        changes.sort(key=lambda c: c.order)
    return out


def _attribute_target(assignment: Assignment) -> Optional[cst.Attribute]:
    """The `c.key` node a plain assignment binds (`c.key = value`, `c.a, c.b = pair`)."""
    statement = assignment.statement
    if assignment.value is None or assignment.augmented or not type(statement) in (cst.Assign, cst.AnnAssign):
        return None
    targets = [t.target for t in statement.targets] if type(statement) is cst.Assign else [statement.target]
    while targets:
        target = targets.pop()
        if type(target) in (cst.Tuple, cst.List):
            targets.extend(e.value for e in target.elements)
        elif type(target) is cst.Attribute and dotted_name(target) == assignment.target:
            return target
    return None


def _changes_binding(
    flow: ValueFlow, name: str, change: _Change, binding: Optional[Assignment], parameter: Optional[FunctionInfo]
) -> bool:
    """The change is made to the dict this binding (or this parameter) holds."""
    reach = flow.bindings.reaching(name, change.ctx, change.order)
    if binding is not None:
        return any(a is binding for a in reach.assignments)
    if parameter is None:  # an imported dict: changed where nothing here rebinds the name
        return not reach.assignments and reach.parameter is None
    return reach.parameter is parameter or (
        not reach.assignments and change.ctx.function is parameter
    )


def _path_between(model, start: Optional[Context], ctx: Context, read: Optional[Context] = None) -> str:
    """On which path a statement in ``ctx`` runs, seen from a binding made in ``start`` and read
    in ``read``: always, on the GPU path, on the host path, or maybe (another `if`, a loop that
    may not run). An `if` the read runs under too (`if bad: raise` before both) rules nothing out."""
    chain = set()
    for current in (start, read):
        while current is not None:
            chain.add(id(current))
            current = current.outer
    seen = set()
    when = ALWAYS
    current = ctx
    while current is not None and id(current) not in chain:
        outer = current.outer
        if current.loop is not None and (outer is None or outer.loop is not current.loop):
            return MAYBE
        guard = current.guard
        if guard is not None and id(guard) not in seen and (outer is None or outer.guard is not guard):
            seen.add(id(guard))
            on_gpu = cuda_test(model, guard.test)
            if on_gpu is None:
                return MAYBE
            path = ON_CUDA if on_gpu == guard.positive else ON_HOST
            if when not in (ALWAYS, path):
                return MAYBE
            when = path
        current = outer
    return when


# -- lookups -----------------------------------------------------------------------------------
def lookup(contents: Contents, key: Tagged, path: Optional[str] = None) -> Tuple[str, Tuple[Value, ...]]:
    """Whether ``key`` is in the dict on ``path`` (None: on any path), and the values it may hold."""
    variants = [v for v in contents if path is None or v.path in (None, path)] or list(contents)
    states = set()
    values: Tuple[Value, ...] = ()
    for variant in variants:
        entry = variant.entries.get(key)
        if entry is None:
            states.add(ABSENT if variant.complete else UNKNOWN)
            continue
        values += entry.values
        if entry.when == ALWAYS or (path is not None and entry.when == path):
            states.add(PRESENT)
        elif path is not None and entry.when in (ON_CUDA, ON_HOST):
            states.add(ABSENT)  # there on the other path only
        else:
            states.add(SOMETIMES)
    if UNKNOWN in states:
        return UNKNOWN, values
    if len(states) == 1:
        return states.pop(), values
    return SOMETIMES, values


def contents_of(model, expr: cst.BaseExpression, ctx: Context, order: float) -> Contents:
    return model.values.ask(DICT_CONTENTS, expr, ctx, order)


def call_held_under(model, item: cst.Subscript, ctx: Context, order: float) -> Optional[Value]:
    """The call a dict holds under a constant string key, when that is the one value it may
    hold there: `self.loaders["train"]` after `self.loaders = {"train": cycle(loader)}`."""
    if len(item.slice) != 1 or type(item.slice[0].slice) is not cst.Index:
        return None
    key = item.slice[0].slice.value
    if type(key) is not cst.SimpleString or not isinstance(key.evaluated_value, str):
        return None
    state, values = lookup(contents_of(model, item.value, ctx, order), tag(key.evaluated_value))
    if state != PRESENT or len(values) != 1 or type(values[0].expr) is not cst.Call:
        return None
    return values[0]


def every_value(contents: Contents) -> Tuple[Tuple[Value, ...], bool]:
    """Every value the dict may hold under any key, and whether those are all."""
    values: Tuple[Value, ...] = ()
    for variant in contents:
        for entry in variant.entries.values():
            values += entry.values
    return values, all(v.complete for v in contents)


def literals_of(question: Question[Literals], values: Sequence[Value]) -> Literals:
    if not values:
        return UNKNOWN_LITERALS
    answers = [v.flow.ask(question, v.expr, v.ctx, v.order) for v in values]
    return answers[0] if len(answers) == 1 else question.combine(answers)


def item_values(
    flow: ValueFlow, question: Question[Literals], container: cst.BaseExpression, key: cst.BaseExpression,
    default: Optional[cst.BaseExpression], ctx: Context, order: int,
) -> Literals:
    """The literals `container[key]` (or `container.get(key, default)`) can be: those under the
    keys ``key`` can be, or, when the key is not known, any value of the dict."""
    contents = flow.ask(DICT_CONTENTS, container, ctx, order)
    keys = flow.ask(question, key, ctx, order)
    answers: List[Literals] = []
    if keys.complete and keys.values:
        for tagged in keys.values:
            state, values = lookup(contents, tagged)
            if state == UNKNOWN:
                return UNKNOWN_LITERALS
            if values:
                answers.append(literals_of(question, values))
            if state != PRESENT:
                if default is None:
                    return UNKNOWN_LITERALS  # a KeyError, or a value the analysis cannot see
                answers.append(flow.ask(question, default, ctx, order))
    else:
        values, complete = every_value(contents)
        if not values:
            return UNKNOWN_LITERALS
        answers.append(literals_of(question, values))
        if default is not None:
            answers.append(flow.ask(question, default, ctx, order))
        if not complete:
            answers.append(UNKNOWN_LITERALS)
    if not answers:
        return UNKNOWN_LITERALS
    found = answers[0] if len(answers) == 1 else question.combine(answers)
    if keys.option is not None and found.option is None:
        found = found.with_option(keys.option)
    return found


# -- what a call receives through `**kwargs` ----------------------------------------------------
def kwargs_entry(model, site: CallSite, key: str, path: Optional[str] = None) -> Tuple[str, Tuple[Value, ...]]:
    """Looks ``key`` up in the dicts a call unpacks with `**`: (PRESENT | ABSENT | SOMETIMES |
    UNKNOWN, the values it may hold). ABSENT when the call unpacks none."""
    states = []
    values: Tuple[Value, ...] = ()
    for arg in site.node.args:
        if arg.star != "**":
            continue
        forwarded = _forwarded(model, site, arg.value, key, path)
        if forwarded is not None:
            state, found = forwarded
        else:
            state, found = lookup(contents_of(model, arg.value, site.ctx, site.order), tag(key), path)
        states.append(state)
        values += found
    if not states:
        return ABSENT, ()
    for state in (PRESENT, UNKNOWN, SOMETIMES):
        if state in states:
            return state, values
    return ABSENT, values


_FORWARDING: set = set()  # the functions whose `**kwargs` are being followed (a cycle stops)


def _forwarded(model, site: CallSite, value: cst.BaseExpression, key: str, path: Optional[str]):
    """`DataLoader(ds, **kwargs)` inside `def make_data_loader(args, **kwargs)`: the keyword the
    function's own `**` parameter holds is what its callers pass, by name or in the dicts they
    unpack (`make_data_loader(args, **{"pin_memory": True})`). None when ``value`` is not that
    parameter, or nothing calls the function."""
    function = site.ctx.function
    if type(value) is not cst.Name or function is None or id(function) in _FORWARDING:
        return None
    star = function.node.params.star_kwarg
    if star is None or star.name.value != value.value or model.reaching(value.value, site.ctx, site.order):
        return None
    callers = model.callers(function)
    if not callers:
        return None
    states, values = [], ()
    _FORWARDING.add(id(function))
    try:
        for owner, call in callers:
            given = next((a for a in call.node.args if a.keyword is not None and a.keyword.value == key), None)
            if given is not None:
                states.append(PRESENT)
                values += (Value(given.value, call.ctx, call.order, owner.values),)
                continue
            state, found = kwargs_entry(owner, call, key, path)
            states.append(state)
            values += found
    finally:
        _FORWARDING.discard(id(function))
    if all(state == PRESENT for state in states):
        return PRESENT, values
    if UNKNOWN in states:
        return UNKNOWN, values
    return (SOMETIMES, values) if PRESENT in states or SOMETIMES in states else (ABSENT, values)


def kwargs_value(model, site: CallSite, key: str) -> Tuple[str, Optional[cst.BaseExpression]]:
    """``kwargs_entry`` on any path, for rules that want one value: (ABSENT | PRESENT | UNKNOWN,
    the value when it is the only one). A key there on some paths only is UNKNOWN here."""
    state, values = kwargs_entry(model, site, key)
    if state == SOMETIMES:
        return UNKNOWN, None
    return state, values[0].expr if state == PRESENT and len(values) == 1 else None


# -- lists -------------------------------------------------------------------------------------
_LIST_ADDERS = ("append", "insert", "extend")


Items = Tuple[bool, Tuple[Value, ...]]
_NO_ITEMS: Items = (False, ())


class ListItems(Question[Items]):
    """What a list may hold, wherever it was built: a literal, or a name bound to a list built
    in steps (`list_elements`), followed through helper returns (`indices, anch =
    self.find_positive(...)` returning the `indices` it appended to). (known, values)."""

    key = "list-items"
    unknown = _NO_ITEMS

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Items]:
        if type(expr) is cst.List:
            if any(type(e) is cst.StarredElement for e in expr.elements):
                return _NO_ITEMS
            return True, tuple(Value(e.value, ctx, order, flow) for e in expr.elements)
        if type(expr) is cst.Name:
            reach = flow.bindings.reaching(expr.value, ctx, order)
            if reach.assignments and all(
                    _built_list(a) is not None or comprehension_element(flow.model, _bound(a)) is not None
                    for a in reach.assignments):
                values = list_elements(flow.model, expr.value, ctx, order)
                return _NO_ITEMS if values is None else (True, values)
            return None
        element = comprehension_element(flow.model, expr)
        if element is not None:
            return True, (Value(element, ctx, order, flow),)
        return _NO_ITEMS if type(expr) in (cst.Attribute, cst.Subscript) else None

    def combine(self, answers: Sequence[Items]) -> Items:
        if not all(known for known, _ in answers):
            return _NO_ITEMS
        return True, tuple(v for _, values in answers for v in values)


LIST_ITEMS = ListItems()


def _bound(binding: Assignment) -> Optional[cst.BaseExpression]:
    """What a plain binding gives its name (not a piece of an unpacking, nor an augmented one)."""
    return None if binding.index is not None or binding.augmented else binding.value


def comprehension_element(model, expr: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """The element a sequence built by a comprehension that moves each item holds, every item of
    it (`t.to(device)` in `[t.to(device) for t in batch]`, `tuple(t.to(device) for t in batch)`,
    `list(...)`); None for anything else. Only moves: what other comprehensions build (index
    tensors made from NumPy arrays, tuples of them) is left to the questions that know it."""
    element = None
    if type(expr) is cst.ListComp:
        element = expr.elt
    elif (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("tuple", "list")
            and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star
            and type(expr.args[0].value) in (cst.GeneratorExp, cst.ListComp)
            and model.imports.qualify(expr.func) is None):
        element = expr.args[0].value.elt
    if (type(element) is cst.Call and type(element.func) is cst.Attribute
            and element.func.attr.value in ("to", "cuda")):
        return element
    return None


def builds_list(binding: Assignment) -> bool:
    """The binding gives its name a list literal (`parts = []`, `boxes, labels = [], []`)."""
    return _built_list(binding) is not None


def _built_list(binding: Assignment) -> Optional[cst.List]:
    """The list literal a binding gives its name (`parts = []`, `boxes, labels = [], []`)."""
    built = bound_element(binding)
    if binding.augmented or not type(built) is cst.List:
        return None
    if any(type(e) is cst.StarredElement for e in built.elements):
        return None
    return built


def list_elements(model, name: str, ctx: Context, order: float, depth: int = 0) -> Optional[Tuple[Value, ...]]:
    """What the list a name holds at a read may hold: the elements of the list literals its
    reaching bindings build (`parts = []`), and what `append`, `insert` and `extend` (of a
    literal) add to those bindings in the same function, wherever they run (a loop may run them
    after the read, too). None when that is not the whole story: a binding is something else (a
    parameter, a call), an element is stored (`parts[i] = v`), or the list is handed to a
    function of the project, which may add to it. A name bound to another list's name
    (`self.indices = indices` at the end of `__init__`) holds what that list holds, when nothing
    adds to it or stores into it under its own name."""
    reach = model.bindings.reaching(name, ctx, order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return None
    values: List[Value] = []
    for binding in reach.assignments:
        built = _built_list(binding)
        element = comprehension_element(model, _bound(binding)) if built is None else None
        if element is not None:
            # Every item is the comprehension's element, whatever the loop it runs over.
            values.append(Value(element, binding.ctx, binding.order, model.values))
            continue
        if built is None:
            aliased = _aliased_list(model, name, binding, depth)
            if aliased is None:
                return None
            values.extend(aliased)
            continue
        values.extend(Value(e.value, binding.ctx, binding.order, model.values) for e in built.elements)
    bindings = {id(a) for a in reach.assignments}

    def same_list(at: Context, at_order: int) -> bool:
        return at.scope == ctx.scope and any(id(a) in bindings for a in model.bindings.reaching(name, at, at_order).assignments)

    for site in model.shared("list-adders", _index_adders).get(name, ()):
        if not same_list(site.ctx, site.order):
            continue
        args = [a for a in site.node.args if a.keyword is None and not a.star]
        if len(args) != len(site.node.args) or len(args) != (2 if site.method == "insert" else 1):
            return None
        added = args[-1].value
        if site.method != "extend":
            values.append(Value(added, site.ctx, site.order, model.values))
        elif type(added) in (cst.List, cst.Tuple) and not any(type(e) is cst.StarredElement for e in added.elements):
            values.extend(Value(e.value, site.ctx, site.order, model.values) for e in added.elements)
        else:
            return None
    for change in _changes(model, name):
        if change.kind == "call" or (change.kind == "escape" and not model.calls.targets(change.node)):
            continue
        if same_list(change.ctx, change.order):
            return None  # `parts[i] = v`, or handed to a function of the project
    return tuple(values)


def _aliased_list(model, name: str, binding: Assignment, depth: int) -> Optional[Tuple[Value, ...]]:
    """The elements of the list a plain alias binding hands ``name`` (`self.indices = indices`)."""
    value = binding.value
    if depth > 2 or binding.index is not None or binding.augmented or not type(value) is cst.Name:
        return None
    if name in model.shared("list-adders", _index_adders):
        return None
    for change in _changes(model, name):
        if change.kind == "call" or (change.kind == "escape" and not model.calls.targets(change.node)):
            continue
        return None  # stored into, or handed to a function of the project, under this name
    return list_elements(model, value.value, binding.ctx, binding.order, depth + 1)


def _index_adders(model) -> Dict[str, List[CallSite]]:
    out: Dict[str, List[CallSite]] = {}
    for site in model.method_calls(*_LIST_ADDERS):
        if site.receiver_name is not None:
            out.setdefault(site.receiver_name, []).append(site)
    return out
