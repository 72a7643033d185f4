"""Command-line options: which `argparse` parser a parse result comes from, which
`add_argument` defines one of its attributes, and the value that attribute has when the option
is not given (its default).

`args.workers` after `parser.add_argument("--workers", type=int, default=8)` and
`args = parser.parse_args()` is 8 unless the run says otherwise: the answer names the option, so
that a rule can say the value is a default. The parser may be built in a helper or in another
file of the project (`parser = get_args_parser()`, `ArgumentParser(parents=[base_parser()])`),
its options added through argument groups and helpers that receive it. Anything that may set the
attribute elsewhere (`args.workers = ...` out of the read's sight, `setattr`, `vars(args)`,
`parser.set_defaults(**cfg)`) makes the answer unknown. A shell script beside the script (or
beside the parser's file) that runs Python with the option (`train.sh` passing
`--dataloader_num_workers=4`) adds the value it passes to the default: the shipped launch is a
run too (a value that is no literal, `--workers $N`, makes the answer unknown). So does a
command line the project's READMEs, notebooks or other launch texts document for the script
(`python oscar/run_vqa.py -j 4` in a `MODEL_ZOO.md`, `launched_options.documented_values`).
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.model.constants import UNKNOWN, Literals, Tagged, tag
from advisor.model.facts import Context
from advisor.model.launched_options import documented_values, expanded_value
from advisor.model.names import dotted_name
from advisor.model.walk import children
from advisor.model.value_flow import Question, ValueFlow, argument

PARSER = "argparse.ArgumentParser"
_GROUPS = ("add_argument_group", "add_mutually_exclusive_group")
# (model, `ArgumentParser(...)` call) pairs, and whether they are all the value can be.
ParserSet = Tuple[Tuple[Tuple[object, cst.Call], ...], bool]
_NONE: ParserSet = ((), False)
# Actions whose option holds None unless given (or a count, a list, a constant: never a default).
_NONE_DEFAULT_ACTIONS = (None, "store", "append", "extend", "count", "store_const", "append_const")


class Parsers(Question[ParserSet]):
    """The `argparse.ArgumentParser(...)` calls a value may be (or an argument group of)."""

    key = "parsers"
    unknown = _NONE
    follows_imports = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[ParserSet]:
        if type(expr) is cst.Call:
            qual = flow.model.imports.qualify(expr.func)
            if qual == PARSER:
                return ((flow.model, expr),), True
            func = expr.func
            if qual is None and type(func) is cst.Attribute and func.attr.value in _GROUPS:
                return flow.ask(self, func.value, ctx, order)
            if qual is not None and _adds_to_parser(qual) and expr.args and expr.args[0].keyword is None:
                # `parser = deepspeed.add_config_arguments(parser)`: the same parser, with the
                # library's own options added
                return flow.ask(self, expr.args[0].value, ctx, order)
            return None if qual is None or _project_function(flow, qual) else _NONE
        if type(expr) in (cst.Name, cst.Attribute, cst.IfExp):
            return None
        return _NONE

    def combine(self, answers: Sequence[ParserSet]) -> ParserSet:
        found: List[Tuple[object, cst.Call]] = []
        seen: Set[int] = set()
        for parsers, _ in answers:
            for pair in parsers:
                if id(pair[1]) not in seen:
                    seen.add(id(pair[1]))
                    found.append(pair)
        return tuple(found), all(exhaustive for _, exhaustive in answers)


PARSERS = Parsers()


def _copied_namespace(flow: ValueFlow, call: cst.Call, ctx: Context, order: int) -> Optional[cst.BaseExpression]:
    """``x`` in `Config(**vars(x))`, or in `Config(**kwargs)` where every binding of `kwargs` the
    call sees is `vars(x)` (`kwargs = vars(args); kwargs.update(optional_kwargs)`, with the
    keys the callers pass, which are none where no caller passes any): the call's only argument
    spreads a parse result's attributes."""
    if len(call.args) != 1 or call.args[0].star != "**":
        return None
    value = call.args[0].value
    if type(value) is cst.Name:
        reach = flow.bindings.reaching(value.value, ctx, order)
        if not reach.closed or reach.parameter is not None or len(reach.assignments) != 1:
            return None
        value = reach.assignments[0].value
    if (type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "vars"
            and len(value.args) == 1 and not value.args[0].star and flow.model.imports.qualify(value.func) is None):
        return value.args[0].value
    return None


def _adds_to_parser(qual: str) -> bool:
    """A library function that adds its own options to the parser it is given and returns it
    (`deepspeed.add_config_arguments`)."""
    name = qual.rsplit(".", 1)[-1]
    return name.startswith("add_") and name.endswith(("_arguments", "_args"))


class ParsedArgs(Question[ParserSet]):
    """The parsers whose parse result a value may be: `parser.parse_args()`, or element 0 of
    `parser.parse_known_args()`."""

    key = "parsed-args"
    unknown = _NONE
    follows_imports = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[ParserSet]:
        if type(expr) is cst.Call:
            qual = flow.model.imports.qualify(expr.func)
            if qual in ("copy.deepcopy", "copy.copy") and len(expr.args) == 1 and not expr.args[0].star:
                # `args_copy = copy.deepcopy(args)`, one per checkpoint key: the same settings
                return flow.ask(self, expr.args[0].value, ctx, order)
            if qual is not None:
                return None if _project_function(flow, qual) else _NONE
            if _method(expr) == "parse_args":
                return flow.ask(PARSERS, expr.func.value, ctx, order)
            copied = _copied_namespace(flow, expr, ctx, order)
            if copied is not None:
                # `args = Config(**vars(args))`: a settings object made of the parse result's
                # attributes, the same settings under another class.
                return flow.ask(self, copied, ctx, order)
            return None  # a helper that returns the parse result
        if type(expr) is cst.Subscript:
            index = expr.slice[0].slice if len(expr.slice) == 1 else None
            if type(index) is cst.Index and type(index.value) is cst.Integer and index.value.value == "0":
                return self.element(flow, expr.value, 0, ctx, order) or _NONE
            return _NONE
        if type(expr) in (cst.Name, cst.Attribute, cst.IfExp):
            return None
        return _NONE

    def element(self, flow: ValueFlow, expr, index: int, ctx: Context, order: int) -> Optional[ParserSet]:
        if type(expr) is cst.Call and _method(expr) == "parse_known_args":
            if index != 0 or flow.model.imports.qualify(expr.func) is not None:
                return _NONE
            return flow.ask(PARSERS, expr.func.value, ctx, order)
        return None

    def combine(self, answers: Sequence[ParserSet]) -> ParserSet:
        return PARSERS.combine(answers)


PARSED_ARGS = ParsedArgs()


def is_parse_result(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is an `argparse` parse result: the run's options
    (`torch.save(args, "training_args.bin")` saves a few hundred bytes, not a checkpoint)."""
    parsers, exhaustive = model.values.ask(PARSED_ARGS, expr, ctx, order)
    return bool(parsers) and exhaustive


def _project_function(flow: ValueFlow, qual: str) -> bool:
    """``qual`` names a function of another module of the project: the follower reads what it
    returns."""
    symbol = flow.model.symbol(qual)
    return symbol is not None and symbol.kind == "function"


def _method(call: cst.Call) -> Optional[str]:
    return call.func.attr.value if type(call.func) is cst.Attribute else None


def option_values(
    flow: ValueFlow, question: Question[Literals], receiver: cst.BaseExpression, attr: str, ctx: Context, order: int
) -> Optional[Literals]:
    """What `receiver.attr` holds when ``receiver`` is an argparse parse result: the default of
    the option that defines ``attr``. None when ``receiver`` is no parse result."""
    parsers, exhaustive = flow.ask(PARSED_ARGS, receiver, ctx, order)
    if not parsers:
        return None
    if not exhaustive:
        return UNKNOWN
    answers = [_default(flow.model, model, call, attr, question, ctx, order) for model, call in parsers]
    found = answers[0] if len(answers) == 1 else question.combine(answers)
    if any(shared_only(m, attr) for owner, _ in parsers for m in models_around(flow.model, owner)):
        found = _with_shares(found)
    return found


def _with_shares(found: Literals) -> Literals:
    """A positive count that some process may cut to its rounded share: 1 to the count."""
    if any(kind != "int" for kind, _ in found.values):
        return found
    values = set(found.values)
    values.update(tag(1) for _, value in found.values if value > 0)
    return Literals(frozenset(values), found.complete, found.option)


def _default(reader, model, parser: cst.Call, attr: str, question: Question[Literals],
             ctx: Optional[Context] = None, order: Optional[float] = None) -> Literals:
    family = _family(model, parser)
    if family is None:
        return UNKNOWN
    models = models_around(reader, model)
    if any(may_set(m, attr, ctx if m is reader else None, order) for m in models if _may_reach(m, reader, model)):
        return UNKNOWN
    answers: List[Literals] = []
    override: Optional[Literals] = None
    for other in models:
        for dest, site in _options_for(other, attr):
            owners, known = other.values.ask(PARSERS, site.receiver, site.ctx, site.order)
            mine = any(id(call) in family for _, call in owners)
            if not known:
                return UNKNOWN  # an option of some parser the analysis cannot tell
            if mine and dest is None:
                if _adds_unknown_args(other, site):
                    continue  # only options the parser did not know: never `attr`, which it does
                return UNKNOWN  # options named by expressions
            if mine:
                default = _option_default(other, site, question)
                launched = _launched_values(reader, other, site.node)
                if launched is not None:
                    # `python train.py --workers 2` in the `train.sh` beside it: the shipped
                    # launch's value, beside the default a plain run gets.
                    default = Literals(default.values | launched.values, default.complete and launched.complete,
                                       default.option)
                answers.append(default)
        for site in other.method_calls("set_defaults"):
            owners, known = other.values.ask(PARSERS, site.receiver, site.ctx, site.order)
            if owners and not any(id(call) in family for _, call in owners):
                continue
            for arg in site.node.args:
                if arg.star or arg.keyword is None:
                    return UNKNOWN  # `set_defaults(**config)`
                if arg.keyword.value == attr:
                    override = other.values.ask(question, arg.value, site.ctx, site.order)
    if override is not None:
        option = next((a.option for a in answers if a.option is not None), None)
        return Literals(override.values, override.complete, option)
    if not answers:
        return UNKNOWN
    return answers[0] if len(answers) == 1 else question.combine(answers)


def _launched_values(reader, model, add_argument: cst.Call) -> Optional[Literals]:
    """The values a shell script beside the file that reads the option, or the one that defines
    it, passes when it runs Python with the option (`accelerate launch train.py
    --dataloader_num_workers=2`, `--with_tracking` for a switch); None when none passes it,
    unknown when a value is not a literal (`--workers $N`)."""
    project = reader.project
    paths = {p for p in (reader.real_path, model.real_path) if p is not None}
    if project is None or not paths:
        return None
    flags = [a.value.evaluated_value for a in add_argument.args
             if a.keyword is None and type(a.value) is cst.SimpleString
             and str(a.value.evaluated_value).startswith("-")]
    if not flags:
        return None
    action = next((a.value for a in add_argument.args if a.keyword is not None and a.keyword.value == "action"), None)
    switch = None
    if type(action) is cst.SimpleString and action.evaluated_value in ("store_true", "store_false"):
        switch = action.evaluated_value == "store_true"
    written: List[str] = []
    for folder in sorted({os.path.dirname(p) for p in paths}):
        for launcher in project.launch_scripts(folder):
            text = project.text_of(launcher)
            if ".py" not in text:
                continue
            for flag in flags:
                written.extend(expanded_value(text, m.group(1)) for m in re.finditer(
                    r"(?<![\w-])%s(?![\w-])(?:=|[ \t]+)?(\S*)" % re.escape(flag), text))
    if model.real_path is not None:
        # The commands the READMEs and other launch texts document for the script.
        written.extend(documented_values(reader, model.real_path, flags))
    found = []
    complete = True
    for raw in written:
        if switch is not None:
            found.append(tag(switch))
            continue
        value = _shell_literal(raw)
        if value is None:
            complete = False
        else:
            found.append(value)
    if not found and complete:
        return None
    return Literals(frozenset(found), complete, None)


_TRAILING_MARKS = re.compile(r"""[`'".,:;)\\]+$""")


def _shell_literal(text: str) -> Optional[Tagged]:
    """`4`, `0.5`, `True`, `"fp16"`, `bf16`: a value written in a shell command line."""
    # A command quoted in prose (`` `python train.py --workers 2` ``) ends in its quote marks.
    text = _TRAILING_MARKS.sub("", text).lstrip("'\"`(")
    if not text or text.startswith(("$", "-", "`")):
        return None
    for convert in (int, float):
        try:
            return tag(convert(text))
        except ValueError:
            pass
    if text in ("True", "False"):
        return tag(text == "True")
    return tag(text)


def _options_for(model, attr: str) -> List[Tuple[Optional[str], object]]:
    """(dest, site) of the file's `add_argument` calls that may define ``attr``: those whose
    dest is ``attr`` or cannot be read, in source order. The dests are read once per file, not
    once per attribute asked."""
    by_dest: Dict[Optional[str], List[Tuple[int, Optional[str], object]]] = model.shared("add-argument-dests", _dests)
    named, unread = by_dest.get(attr, []), by_dest.get(None, [])
    found = sorted(named + unread, key=lambda entry: entry[0]) if named and unread else named or unread
    return [(dest, site) for _, dest, site in found]


def defined_options(model) -> Dict[Optional[str], List[Tuple[int, Optional[str], object]]]:
    """The file's `add_argument` calls by the attribute they set (None: not read), worked out
    once per file."""
    return model.shared("add-argument-dests", _dests)


def _dests(model) -> Dict[Optional[str], List[Tuple[int, Optional[str], object]]]:
    out: Dict[Optional[str], List[Tuple[int, Optional[str], object]]] = {}
    for position, site in enumerate(model.method_calls("add_argument")):
        dest = _dest(site.node)
        out.setdefault(dest, []).append((position, dest, site))
    return out


def _family(model, parser: cst.Call, depth: int = 0) -> Optional[Set[int]]:
    """The parser and those it takes options from (`parents=[...]`), by node id; None when a
    parent cannot be followed."""
    family = {id(parser)}
    for arg in parser.args:
        if arg.keyword is None or arg.keyword.value != "parents":
            continue
        if not type(arg.value) in (cst.List, cst.Tuple) or depth > 3:
            return None
        for element in arg.value.elements:
            if type(element) is cst.StarredElement:
                return None
            owners, known = model.values.ask(PARSERS, element.value, _ctx_of(model, parser), model.order_of(parser))
            if not known or not owners:
                return None
            for owner_model, call in owners:
                inner = _family(owner_model, call, depth + 1)
                if inner is None:
                    return None
                family |= inner
    return family


def _ctx_of(model, node: cst.CSTNode) -> Context:
    """The context of the call ``node`` (recorded by the walk)."""
    sites: Dict[int, object] = model.shared("call-sites-by-node", lambda m: {id(s.node): s for s in m.facts.calls})
    site = sites.get(id(node))
    return site.ctx if site is not None else Context()


def models_around(reader, model) -> List[object]:
    """The files whose options, defaults and attribute stores count: the one that builds the
    parser, those it imports or is imported by, and the one that reads the value."""
    out = [model]
    if reader is not model:
        out.append(reader)
    project = getattr(model, "project", None)
    path = getattr(model, "real_path", None)
    if project is not None and path is not None:
        for other in project.related_models(path, hops=1):
            if all(other is not m for m in out):
                out.append(other)
    return out


def _may_reach(other, reader, model) -> bool:
    """``other`` can touch the parse result: it is the file that reads it or builds its parser,
    or one of them imports it or is imported by it. Another script that only imports the same
    package sets attributes of its own namespace, in its own process."""
    if other is reader or other is model:
        return True
    project = getattr(model, "project", None)
    path = getattr(other, "real_path", None)
    if project is None or path is None:
        return True
    return any(p is not None and project.imports_either_way(path, p)
               for p in (getattr(reader, "real_path", None), getattr(model, "real_path", None)))


def may_set(model, attr: str, ctx: Optional[Context] = None, order: Optional[float] = None) -> bool:
    """The file may set ``attr`` on some namespace: `x.attr = ...` (other than `self.attr`),
    `setattr(x, name, ...)` with that or an unknown name, `x.__dict__.update(...)`, `vars(x)`.
    A rounded share of the attribute itself (`args.workers = (args.workers + n - 1) // n`) does
    not count: it keeps a positive count positive (see `shared_only`). With the read's place, a
    store later in the same function, outside any loop, cannot reach it."""
    stored, anything, _ = model.shared("namespace-stores", _namespace_stores)
    if anything:
        return True
    places = stored.get(attr)
    if places is None:
        return False
    if not places:
        return True  # `setattr(args, "attr", ...)`
    # Stores no run reaches (`args.world_size = int(os.environ["WORLD_SIZE"])` under a test of
    # another option that its default decides against) leave the option's default in place.
    # Deciding that reads options again: a store met again while deciding counts as a store.
    if ctx is not None and order is not None and ctx.loop is None:
        places = [(c, o) for c, o in places if not (c.function is ctx.function and c.loop is None and o > order)]
        if not places:
            return False
    busy = model.shared("namespace-stores-busy", lambda m: set())
    if attr in busy:
        return True
    busy.add(attr)
    try:
        return not all(model.guards.dead(c) for c, _ in places)
    finally:
        busy.discard(attr)


def namespace_stores(model) -> Tuple[Dict[str, List[Tuple[Context, int]]], bool, Set[str]]:
    """The file's attribute stores on namespaces, once per file (see `_namespace_stores`)."""
    return model.shared("namespace-stores", _namespace_stores)


def shared_only(model, attr: str) -> bool:
    """The file sets ``attr`` only to a rounded share of itself: one process's part of a count
    (`args.workers = int((args.workers + ngpus - 1) / ngpus)`), between 1 and the count."""
    return attr in model.shared("namespace-stores", _namespace_stores)[2]


def rounded_share(expr: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """The count ``a`` of a share rounded up: `(a + n - 1) // n`, `int((a + n - 1) / n)`,
    `math.ceil(a / n)`; None for anything else."""
    if type(expr) is cst.Call and len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None:
        name = dotted_name(expr.func)
        inner = expr.args[0].value
        if name == "math.ceil" and type(inner) is cst.BinaryOperation and type(inner.operator) is cst.Divide:
            return inner.left
        if name != "int":
            return None
        expr = inner
    if not type(expr) is cst.BinaryOperation or not type(expr.operator) in (cst.Divide, cst.FloorDivide):
        return None
    top, divisor = expr.left, dotted_name(expr.right)
    if divisor is None or not type(top) is cst.BinaryOperation or not type(top.operator) is cst.Subtract:
        return None
    if not (type(top.right) is cst.Integer and top.right.value == "1"):
        return None
    added = top.left
    if not type(added) is cst.BinaryOperation or not type(added.operator) is cst.Add:
        return None
    if dotted_name(added.right) == divisor:
        return added.left
    if dotted_name(added.left) == divisor:
        return added.right
    return None


def _namespace_stores(model) -> Tuple[Dict[str, List[Tuple[Context, int]]], bool, Set[str]]:
    """(attribute -> where plain stores set it (context, order), empty for a `setattr`; whether
    anything may set any attribute; attributes set only to a rounded share of themselves)."""
    stored: Dict[str, List[Tuple[Context, int]]] = {}
    shares: Set[str] = set()
    anything = False
    for (_, target), found in model.facts.assignments.items():
        parts = target.split(".")
        if len(parts) >= 2 and not (len(parts) == 2 and parts[0] in ("self", "cls")):
            if all(not a.augmented and dotted_name(rounded_share(a.value)) == target for a in found):
                shares.add(parts[-1])
            else:
                stored.setdefault(parts[-1], []).extend((a.ctx, a.order) for a in found)
    for site in model.facts.calls_by_callee.get("setattr", ()):
        args = site.node.args
        if len(args) >= 2 and type(args[1].value) is cst.SimpleString:
            value = args[1].value.evaluated_value
            if isinstance(value, str):
                stored[value] = []
                continue
        names = _looped_names(model, site, args[1].value) if len(args) >= 2 else None
        if names is None and len(args) >= 2:
            names = _names_callers_give(model, site, args[1].value)
        if names is not None:
            for value in names:
                # `for name in ["lr", "lr_backbone"]: setattr(args, name, v)`, or a helper's
                # `setattr(target, attr_name, ...)` that the file calls with written names
                stored[value] = []
            continue
        anything = anything or not _on_self(site)
    for site in model.method_calls("update"):
        receiver = site.receiver
        if (site.receiver_name or "").endswith("__dict__") and not (site.receiver_name or "").startswith("self."):
            anything = True  # `args.__dict__.update(config)`
        elif type(receiver) is cst.Call and type(receiver.func) is cst.Name and receiver.func.value == "vars":
            anything = True  # `vars(args).update(config)`
    for name, stores in model.facts.item_stores.items():
        if not name.endswith("__dict__"):
            continue
        for store in stores:
            if _own_object(model, name.rsplit(".", 1)[0], store):
                continue  # `self.__dict__[key] = value` in a config class: that object's fields
            key = store.key
            if type(key) is cst.SimpleString and isinstance(key.evaluated_value, str):
                stored.setdefault(key.evaluated_value, []).append((store.ctx, store.order))  # `cfg.__dict__["local_rank"] = 0`
            else:
                anything = True
    return stored, anything, shares - stored.keys()


def _own_object(model, holder: str, store) -> bool:
    """The object whose `__dict__` is written is the method's own (`self`), or one the function
    builds from a class of the file (`config = BertConfig(-1)`, then `config.__dict__[key] =
    value` in a `from_dict`): a config object's fields, not an options namespace. So is an
    imported module (`models.__dict__[name] = custom.__dict__[name]` registering architectures
    in `torchvision.models`)."""
    if holder == "self":
        return True
    if "." in holder:
        return False
    bound = model.facts.assignments.get((store.ctx.scope, holder), ())
    if not bound and model.imports.qualify(cst.Name(holder)) is not None:
        return True
    return bool(bound) and all(
        type(a.value) is cst.Call and type(a.value.func) is cst.Name
        and (a.value.func.value in model.facts.classes or a.value.func.value == "cls") for a in bound)


def _names_callers_give(model, site, expr: cst.BaseExpression) -> Optional[List[str]]:
    """The strings a parameter of the function holding ``site`` takes, when the function is
    called by its name in this file only, each call writing the name out (`update_attr("visual",
    cfg, "num_hidden_layers", args, "visual_num_hidden_layers")`); None otherwise."""
    info = site.ctx.function
    if type(expr) is not cst.Name or info is None or info.class_name is not None or expr.value not in info.params:
        return None
    reach = model.bindings.reaching(expr.value, site.ctx, site.order)
    if reach.assignments or reach.parameter is None:
        return None
    name = info.node.name.value
    text = model.text if model.text is not None else model.module.code
    if text.count(name) != 1 + len(model.facts.calls_by_callee.get(name, ())):
        return None  # handed around as a value, or named by an importer: callers out of sight
    position = info.params.index(expr.value)
    found: List[str] = []
    for call in model.facts.calls_by_callee.get(name, ()):
        given = argument(call.node, expr.value, position)
        if given is None or given.star or type(given.value) is not cst.SimpleString:
            return None
        value = given.value.evaluated_value
        if not isinstance(value, str):
            return None
        found.append(value)
    return found or None


def _looped_names(model, site, expr: cst.BaseExpression) -> Optional[List[str]]:
    """The strings a name takes when every binding of it that reaches the call is the target of
    a loop over a literal list of strings; None otherwise."""
    if type(expr) is not cst.Name:
        return None
    reach = model.bindings.reaching(expr.value, site.ctx, site.order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return None
    out: List[str] = []
    for assignment in reach.assignments:
        iterable = assignment.iterable
        if assignment.value is None and assignment.index in (None, 0):
            keys = _dict_keys(model, iterable, assignment.index, assignment.ctx, assignment.order)
            if keys is not None:
                out.extend(keys)  # `for name, val in default_params.items(): setattr(args, name, val)`
                continue
        if assignment.value is not None or assignment.index is not None or type(iterable) not in (cst.List, cst.Tuple):
            return None
        for element in iterable.elements:
            value = element.value.evaluated_value if type(element.value) is cst.SimpleString else None
            if not isinstance(value, str):
                return None
            out.append(value)
    return out


def _dict_keys(model, iterable, index, ctx, order) -> Optional[List[str]]:
    """The keys a loop over a dict takes (`for k, v in d.items()`, `for k in d.keys()`, `for k in
    d`), when ``d`` is a name bound once to a dict display, or to the result of a project function
    every return of which is one (open_clip's `get_default_params(model_name)`), with written
    string keys; None otherwise."""
    if iterable is None:
        return None
    if type(iterable) is cst.Call and type(iterable.func) is cst.Attribute and not iterable.args:
        method = iterable.func.attr.value
        if (method == "items") != (index == 0) or method not in ("items", "keys"):
            return None
        iterable = iterable.func.value
    elif index is not None:
        return None
    value = iterable
    if type(iterable) is cst.Name:
        reach = model.bindings.reaching(iterable.value, ctx, order)
        if not reach.closed or reach.parameter is not None or len(reach.assignments) != 1:
            return None
        bound = reach.assignments[0]
        if bound.value is None or bound.index is not None:
            return None
        value, ctx, order = bound.value, bound.ctx, bound.order
    displays = [value]
    if type(value) is cst.Call:
        found = model.values.callee(value, ctx, order)
        if found is None:
            return None
        displays = [r.value for r in found[1].return_sites]
    keys: List[str] = []
    for display in displays:
        if type(display) is not cst.Dict or not display.elements:
            return None
        for element in display.elements:
            key = getattr(element, "key", None)
            if type(key) is not cst.SimpleString or not isinstance(key.evaluated_value, str):
                return None  # a `**spread`, or a key made at run time
            keys.append(key.evaluated_value)
    return keys


def _on_self(site) -> bool:
    args = site.node.args
    return bool(args) and dotted_name(args[0].value) in ("self", "cls")


def _dest(call: cst.Call) -> Optional[str]:
    """The attribute an `add_argument` call defines: `dest=`, else the first long option, else
    the first short one, dashes turned to underscores; None when it cannot be read."""
    names: List[str] = []
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == "dest":
                return _text(arg.value)
            continue
        if arg.star:
            return None
        text = _text(arg.value)
        if text is None:
            return None
        names.append(text)
    if not names:
        return None
    longs = [n for n in names if n.startswith("--")]
    if longs:
        return longs[0][2:].replace("-", "_")
    if names[0].startswith("-"):
        return names[0][1:].replace("-", "_")
    return names[0]


def _adds_unknown_args(model, site) -> bool:
    """`for arg in unknown: parser.add_argument(arg, type=eval)` where `parsed, unknown =
    parser.parse_known_args()`: options made from the arguments the parser did not recognise.
    None of them can be an option it defines (argparse refuses a second option with the same
    string), so they leave that option's default alone."""
    positional = [a.value for a in site.node.args if a.keyword is None and not a.star]
    if not positional or type(positional[0]) is not cst.Name:
        return False
    reach = model.bindings.reaching(positional[0].value, site.ctx, site.order)
    if not reach.closed or reach.parameter is not None or not reach.assignments:
        return False
    for assignment in reach.assignments:
        iterable = assignment.iterable
        if assignment.value is not None or type(iterable) is not cst.Name:
            return False
        source = model.bindings.reaching(iterable.value, assignment.ctx, assignment.order)
        if not source.closed or source.parameter is not None or not source.assignments or not all(
            a.index == 1 and type(a.value) is cst.Call and type(a.value.func) is cst.Attribute
            and a.value.func.attr.value == "parse_known_args" for a in source.assignments
        ):
            return False
    return True


def _text(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) in (cst.SimpleString, cst.ConcatenatedString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _option_default(model, site, question: Question[Literals]) -> Literals:
    call: cst.Call = site.node
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    strings = [_text(a.value) or "" for a in call.args if a.keyword is None]
    option = next((s for s in strings if s.startswith("--")), strings[0] if strings else "")
    if not option.startswith("-") and _text(keywords.get("nargs", cst.Name("None"))) not in ("?", "*"):
        return UNKNOWN  # a positional argument: always given on the command line
    required = keywords.get("required")
    if required is not None and not (type(required) is cst.Name and required.value == "False"):
        return UNKNOWN
    action = keywords.get("action")
    action_text = _text(action) if action is not None else None
    if action is not None and action_text is None and "default" not in keywords:
        return UNKNOWN  # a custom action decides
    default = keywords.get("default")
    if default is not None:
        if model.imports.qualify(default) == "argparse.SUPPRESS":
            return UNKNOWN
        found = _split_length(question, default, keywords.get("type"))
        if found is None:
            found = model.values.ask(question, default, site.ctx, site.order)
            found = _converted(found, keywords.get("type"))
    elif action_text == "store_true":
        found = Literals(frozenset({tag(False)}), True)
    elif action_text == "store_false":
        found = Literals(frozenset({tag(True)}), True)
    elif action_text in _NONE_DEFAULT_ACTIONS:
        found = Literals(frozenset({tag(None)}), True)
    else:
        return UNKNOWN
    return Literals(found.values, found.complete, option or None)


def _split_length(question: Question[Literals], default: cst.BaseExpression,
                  kind: Optional[cst.BaseExpression]) -> Optional[Literals]:
    """How many items a text default becomes when `type` splits it at commas
    (`default="0", type=lambda x: list(map(int, x.split(",")))` is a list of one): asked by the
    length question only; None otherwise."""
    if question.key != "sequence-lengths" or type(kind) is not cst.Lambda or type(default) is not cst.SimpleString:
        return None
    text = default.evaluated_value
    if not isinstance(text, str):
        return None
    stack: List[cst.CSTNode] = [kind.body]
    while stack:
        node = stack.pop()
        if (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "split"
                and len(node.args) == 1 and type(node.args[0].value) is cst.SimpleString
                and node.args[0].value.evaluated_value == ","):
            return Literals(frozenset({tag(len(text.split(",")))}), True)
        stack.extend(children(node))
    return None


def _converted(found: Literals, kind: Optional[cst.BaseExpression]) -> Literals:
    """argparse passes a string default through `type` (`default="8", type=int` is 8)."""
    if not any(k == "str" for k, _ in found.values):
        return found
    convert = {"int": int, "float": float, "str": str}.get(dotted_name(kind) or "str") if kind is not None else str
    if convert is None:
        return UNKNOWN
    values: Set[Tagged] = set()
    for k, value in found.values:
        if k != "str":
            values.add((k, value))
            continue
        try:
            values.add(tag(convert(value)))
        except ValueError:
            return UNKNOWN
    return Literals(frozenset(values), found.complete, found.option)


_ABSL_BOOL = r"DEFINE_bool(?:ean)?\(\s*(?:name\s*=\s*)?[\"']%s[\"']\s*,\s*(?:default\s*=\s*)?(\w+)"


# `    n_gpu: int = 1` in a dataclass body: a field with a literal default.
_DATACLASS_FIELD = r"(?m)^[ \t]+%s[ \t]*:[ \t]*[\w.\[\], ]+=[ \t]*([\w.+-]+)[ \t]*(?:#.*)?$"


def defaults_by_name(model, attr: str, question: Question[Literals], launched: bool = False) -> Optional[Literals]:
    """The defaults of every option named ``attr`` in the file and the files around it (its
    dependencies: the launcher that builds the parser), when the run leaves them as they are: no
    shipped launch script passes the option and no code of those files sets the attribute on a
    namespace. With ``launched``, the values the shipped commands pass join the defaults
    instead (`--workers=8` in a README beside a default of 4: some workers either way). None
    when there is no such option, or one cannot be read. Worked out once per file and name."""
    known = model.shared("option-defaults-by-name", lambda m: {})
    key = (attr, launched)
    if key not in known:
        known[key] = _defaults_by_name(model, attr, question, launched)
    return known[key]


def _defaults_by_name(model, attr: str, question: Question[Literals], launched: bool = False) -> Optional[Literals]:
    if may_set(model, attr):
        return None
    project, path = getattr(model, "project", None), getattr(model, "real_path", None)
    others: List[Tuple[str, Optional[object]]] = [(model.text or "", model)]
    if project is not None and path is not None:
        own = os.path.normpath(os.path.abspath(path))
        nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(path)}
        for other_path in project.files_containing(attr):
            key = os.path.normpath(os.path.abspath(other_path))
            if key in nearby and key != own:
                others.append((project.text_of(other_path), other_path))
    values: Set[Tagged] = set()
    option: Optional[str] = None
    absl = re.compile(_ABSL_BOOL % re.escape(attr))
    field = re.compile(_DATACLASS_FIELD % re.escape(attr))
    for text, other in others:
        for match in absl.finditer(text):
            if match.group(1) not in ("False", "True", "0", "1"):
                return None
            values.add(tag(match.group(1) in ("True", "1")))
            option = option or attr
        if "@dataclass" in text:
            # `n_gpu: int = 1` in a settings dataclass (a library's `ModelArgs`): its default,
            # which a user's run changes by asking.
            for match in field.finditer(text):
                value = _shell_literal(match.group(1))
                if value is None:
                    return None
                values.add(value)
                option = option or attr
        if "add_argument" not in text:
            continue
        if isinstance(other, str):
            other = project.model(other)
            if other is None:
                return None
        for dest, site in _options_for(other, attr):
            if dest != attr:
                return None  # an option whose name cannot be read may be this one
            default = _option_default(other, site, question)
            if not default.complete or not default.values:
                return None
            passed = _launched_values(model, other, site.node)
            if passed is not None:
                if not launched or not passed.complete:
                    return None  # a shipped launch script passes it
                values.update(passed.values)
            values.update(default.values)
            option = option or default.option or attr
        if other is not model and may_set(other, attr):
            return None
    if option is None:
        return None
    return Literals(frozenset(values), True, option)
