"""Which literal an expression can be: an int, a float, a bool, a str, None, or a torch dtype.

The follower goes back through names, parameters (callers and defaults), helper returns and
both branches of `x if c else y`, as for every question; on the way it reads values out of the
containers a program keeps its settings in:

- a dict, indexed with a key it can resolve (`{"fp16": torch.float16, ...}[dtype]`, `cfg["k"]`,
  `cfg.get("k", 4)`), or with any key (every value of the table);
- a command-line option (`args.workers` after `parser.add_argument("--workers", default=8)`,
  see `cli_options.py`);
- a settings object whose value is written where it is built (`SimpleNamespace(k=4)`, an
  instance of a dataclass or of a class with class-level defaults, see `config_objects.py`).

An answer is the set of values seen and whether every path gave one (``complete``). A value a
run may change without editing the code (a command-line default) names the option in
``option``: rules say so in their message.
"""

from __future__ import annotations

from typing import FrozenSet, Optional, Sequence

import libcst as cst

from advisor.model.cli_options import option_values, rounded_share
from advisor.model.config_nodes import config_default
from advisor.model.config_objects import setting_values
from advisor.model.constants import UNKNOWN, Literals, Tagged, constant, known, setting_read, tag
from advisor.model.containers import item_values
from advisor.model.environment import environment_read, environment_setting
from advisor.model.facts import Assignment, Context
from advisor.model.loaded_configs import loaded_config
from advisor.model.names import dotted_name
from advisor.model.value_flow import SPAWNERS, Question, ValueFlow, argument

class LiteralValues(Question[Literals]):
    key = "literals"
    unknown = UNKNOWN
    follows_imports = True
    # A binding no run reaches adds no value (`args.world_size = int(os.environ["WORLD_SIZE"])`
    # under `if args.dist_url == "env://" and ...` where the option's default is a TCP address).
    skips_dead = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Literals]:
        model = flow.model
        value = constant(model, expr)
        if value is not None:
            return known((value,))
        if type(expr) is cst.Name:
            return None
        if type(expr) is cst.Attribute:
            return self._attribute(flow, expr, ctx, order)
        if type(expr) is cst.Subscript:
            key = _single_index(expr)
            if key is None:
                return UNKNOWN
            return _or_setting(item_values(flow, self, expr.value, key, None, ctx, order), key)
        if type(expr) is cst.Call:
            func = expr.func
            read = environment_read(model, expr)
            if read is not None:
                name, default = read
                found = flow.ask(self, default, ctx, order)
                # The default is what a run gets unless its launch sets the variable: a run
                # setting, as a command-line default is.
                return found.with_option(environment_setting(name)) if found.complete else UNKNOWN
            converted = _converted(flow, self, expr, ctx, order)
            if converted is not None:
                return converted
            if type(func) is cst.Attribute and func.attr.value == "get" and 1 <= len(expr.args) <= 2:
                if any(a.keyword is not None or a.star for a in expr.args):
                    return UNKNOWN
                default = expr.args[1].value if len(expr.args) == 2 else cst.Name("None")
                found = item_values(flow, self, func.value, expr.args[0].value, default, ctx, order)
                if len(expr.args) == 2 and not found.values and not found.complete:
                    # `cfg.get("num_workers", 4)`: the setting, or the default the code gives.
                    return self.combine([_or_setting(found, expr.args[0].value), flow.ask(self, default, ctx, order)])
                return _or_setting(found, expr.args[0].value)
            qual = model.imports.qualify(func)
            if qual in CPU_COUNTS:
                # The machine's core count: some workers wherever it runs, never a value the code holds.
                return setting_read(f"{qual}()")
            return None  # a helper of the project: what it returns
        if type(expr) is cst.IfExp:
            return None
        if type(expr) in (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation):
            return _evaluated(flow, self, expr, ctx, order)
        return UNKNOWN

    def _attribute(self, flow: ValueFlow, expr: cst.Attribute, ctx: Context, order: int) -> Optional[Literals]:
        name = dotted_name(expr)
        reach = flow.bindings.reaching(name, ctx, order) if name is not None else None
        if reach and not _only_shares(reach, name) and not _only_dead(flow, reach):
            return None  # bound where it is read (`args.workers = 0`)
        if not reach and name is not None:
            passed = _attribute_of_parameter(flow, self, name, ctx)
            if passed is not None and passed.complete:
                return passed  # `args.distributed` in `main_worker(gpu, ngpus, args)`, set in `main()`
            if self.uncalled_default:
                configured = _configured_default(flow, self, name, ctx)
                if configured is not None:
                    return configured  # `config.with_cp` of a model the library builds from its config
        qual = flow.model.imports.qualify(expr)
        if qual is not None and flow.model.symbol(qual) is not None:
            return None  # a module's name (`config.NUM_WORKERS`), not an attribute of an imported object
        if qual is not None and flow.model.symbol(qual.rpartition(".")[0]) is None:
            return config_default(flow, self, expr)  # `cfg.DATA_LOADER.NUM_WORKERS` of an imported node
        found = option_values(flow, self, expr.value, expr.attr.value, ctx, order)
        if found is None:
            found = setting_values(flow, self, expr.value, expr.attr.value, ctx, order)
        if found is None:
            found = config_default(flow, self, expr)
        if found is not None:
            return found
        return None if name is not None else UNKNOWN

    def combine(self, answers: Sequence[Literals]) -> Literals:
        values: FrozenSet[Tagged] = frozenset().union(*(a.values for a in answers))
        option = next((a.option for a in answers if a.option is not None), None)
        settings: FrozenSet[str] = frozenset().union(*(a.settings for a in answers))
        return Literals(values, all(a.complete for a in answers), option, settings, all(a.covered for a in answers))

    def refine(self, flow: ValueFlow, expr, ctx: Context, order: int, answer: Literals) -> Literals:
        """`config.data.num_workers` that nothing in the program binds: a setting read."""
        if type(expr) is cst.Attribute and not answer.values and not answer.covered:
            return _setting_attribute(expr) or _loaded_setting(flow, expr, ctx, order) or answer
        return answer

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> Literals:
        return UNKNOWN

    def augmented(self, flow: ValueFlow, assignment: Assignment, before: Literals, value: Literals) -> Literals:
        return UNKNOWN


LITERALS = LiteralValues()
# Functions that count the machine's CPUs (a loader's `num_workers=os.cpu_count()`).
CPU_COUNTS = frozenset({"os.cpu_count", "multiprocessing.cpu_count", "psutil.cpu_count"})


_THROUGH_DEPTH = 3


def _attribute_of_parameter(flow: ValueFlow, question: "LiteralValues", name: str, ctx: Context) -> Optional[Literals]:
    """`args.distributed` read in a function that takes `args` and binds no such attribute
    itself: what the attribute holds where each call passes the object (`args.distributed =
    args.world_size > 1 or args.multiprocessing_distributed` in `main()`, then
    `main_worker(args.gpu, ngpus, args)` or `mp.spawn(main_worker, args=(ngpus, args))`).
    None when some call cannot be followed."""
    info = ctx.function
    root, _, rest = name.partition(".")
    if info is None or root in ("self", "cls") or root not in info.params or flow.through_depth >= _THROUGH_DEPTH:
        return None
    position = info.params.index(root) - info.receiver_params
    passed = []
    for owner, site in flow.model.callers(info):
        arg = argument(site.node, root, position)
        if arg is None or arg.star:
            return None
        passed.append((owner, arg.value, site.ctx, site.order))
    for site in flow.model.calls_to(*SPAWNERS):
        target = argument(site.node, "fn", 0)
        if target is None or type(target.value) is not cst.Name or info.class_name is not None:
            continue
        if flow.bindings.function(target.value.value, site.ctx, site.order) is not info:
            continue
        tupled = argument(site.node, "args", 1)
        elements = tupled.value.elements if tupled is not None and type(tupled.value) is cst.Tuple else None
        if position < 1 or elements is None or position - 1 >= len(elements) or any(
                type(e) is cst.StarredElement for e in elements):
            return None
        passed.append((flow.model, elements[position - 1].value, site.ctx, site.order))
    if not passed:
        return None
    answers = []
    flow.through_depth += 1
    try:
        for owner, value, site_ctx, site_order in passed:
            answers.append(owner.values.ask(question, owner.values.made_read(value, rest), site_ctx, site_order))
    finally:
        flow.through_depth -= 1
    return question.combine(answers)


def _configured_default(flow: ValueFlow, question: "LiteralValues", name: str, ctx: Context) -> Optional[Literals]:
    """`config.with_cp` read in a method of a Hugging Face model class of the file whose
    `config_class` (on it or a base of the file) is a project class that stores the attribute
    from an `__init__` parameter with a default (`with_cp=False`, then `self.with_cp = with_cp`):
    that default, which the library's `from_pretrained` leaves unless a `config.json` says
    otherwise (the flag's text check reads those files). None for anything else."""
    info = ctx.function
    root, _, attr = name.partition(".")
    if info is None or info.class_name is None or not attr or "." in attr or root in ("self", "cls") \
            or root not in info.params:
        return None
    model = flow.model
    config = _config_class(model, info.class_name)
    if config is None:
        return None
    owner, config_info = config
    stores = owner.facts.assignments.get((config_info.scope, f"self.{attr}"), [])
    if len(stores) != 1 or type(stores[0].value) is not cst.Name or stores[0].value.value != attr:
        return None
    init = owner.facts.functions.get(f"{config_info.name}.__init__")
    if init is None:
        return None
    params = init.node.params
    for param in (*params.params, *params.kwonly_params):
        if param.name.value == attr and param.default is not None:
            found = owner.values.ask(question, param.default, stores[0].ctx, stores[0].order)
            return found if found.complete else None
    return None


def _config_class(model, class_name: str, depth: int = 0):
    """(owner, ClassInfo) of the `config_class = SomeConfig` a class of the file (or a base of
    it defined in the file) names, when that is a project class."""
    holder = model.facts.classes.get(class_name)
    if holder is None or depth > 3:
        return None
    found = [small.value for line in holder.node.body.body if type(line) is cst.SimpleStatementLine
             for small in line.body if type(small) is cst.Assign and len(small.targets) == 1
             and type(small.targets[0].target) is cst.Name and small.targets[0].target.value == "config_class"]
    if len(found) == 1 and type(found[0]) in (cst.Name, cst.Attribute):
        value = found[0]
        if type(value) is cst.Name and value.value in model.facts.classes:
            return model, model.facts.classes[value.value]
        qual = model.imports.qualify(value)
        symbol = model.symbol(qual) if qual is not None else None
        if symbol is not None and symbol.kind == "class":
            return symbol.model, symbol.info
        return None
    for base in holder.bases:
        if base in model.facts.classes:
            return _config_class(model, base, depth + 1)
    return None


def _or_setting(found: Literals, key: cst.BaseExpression) -> Literals:
    """``found`` for `container[key]`, or a setting read when no path of it is known and the key
    is a name written in place (`cfg["data"]["num_workers"]`)."""
    if found.values or found.covered or not type(key) is cst.SimpleString:
        return found
    name = constant(None, key)
    return setting_read(name[1]) if name is not None and name[1].isidentifier() else found


def _setting_attribute(expr: cst.Attribute) -> Optional[Literals]:
    """An attribute of an attribute (`config.data.num_workers`, `opt.train.workers`): a setting
    of a nested settings object, unless its root is `self` (an object's own state). A plain
    `args.workers` is not one: a parse result whose parser is out of sight may default to
    anything."""
    root = expr.value
    while type(root) is cst.Attribute:
        root = root.value
    if not type(expr.value) is cst.Attribute or not type(root) is cst.Name or root.value in ("self", "cls"):
        return None
    return setting_read(expr.attr.value)


def _loaded_setting(flow: ValueFlow, expr: cst.Attribute, ctx: Context, order: int) -> Optional[Literals]:
    """`cfg.use_adapted_weight` where `cfg` holds a config loaded from a file
    (`OmegaConf.load(args.config)`, `loaded_configs.py`): a setting read."""
    if type(expr.value) is not cst.Name or expr.value.value in ("self", "cls"):
        return None
    if not loaded_config(flow.model, expr.value.value, ctx, order):
        return None
    return setting_read(expr.attr.value)


def _only_shares(reach, name: str) -> bool:
    """Every binding that reaches the read cuts the attribute to a rounded share of itself
    (`args.workers = (args.workers + n - 1) // n`): what it holds is 1 to the option's value,
    which the option's default answers (`cli_options.shared_only`)."""
    return reach.parameter is None and all(
        not a.augmented and dotted_name(rounded_share(a.value)) == name for a in reach.assignments
    )


def _only_dead(flow: ValueFlow, reach) -> bool:
    """Every binding that reaches the read sits where no run goes (`args.world_size =
    int(os.environ["WORLD_SIZE"])` under `if args.dist_url == "env://" and ...` whose option
    defaults to a TCP address): the option's own value is what the read sees."""
    return reach.parameter is None and bool(reach.assignments) and all(
        flow.model.guards.dead(a.ctx) for a in reach.assignments
    )


def _single_index(expr: cst.Subscript) -> Optional[cst.BaseExpression]:
    if len(expr.slice) != 1 or not type(expr.slice[0].slice) is cst.Index:
        return None
    index = expr.slice[0].slice
    return None if index.star is not None else index.value


def literal_values(model, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> Literals:
    """The literals ``expr`` can be where it is read (see the module's docstring)."""
    return model.values.ask(LITERALS, expr, ctx, model.order_of(expr) if order is None else order)


class DefaultedLiterals(LiteralValues):
    """`LiteralValues` where a parameter that no call of the project passes has its default
    (`Question.uncalled_default`): the flags a library or a registry-built block leaves off
    unless its user turns them on."""

    key = "literals-defaulted"
    uncalled_default = True


DEFAULTED_LITERALS = DefaultedLiterals()


def defaulted_literals(model, expr: cst.BaseExpression, ctx: Context, order: float) -> Literals:
    return model.values.ask(DEFAULTED_LITERALS, expr, ctx, order)


class SequenceLengths(LiteralValues):
    """How many items a list or tuple literal holds, on every path to the read: `device_ids` taken
    from a parameter whose default is `[0]` and that no caller passes is one device."""

    key = "sequence-lengths"
    follows_imports = False

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Literals]:
        if type(expr) in (cst.List, cst.Tuple):
            if any(type(e) is cst.StarredElement for e in expr.elements):
                return UNKNOWN
            return known((tag(len(expr.elements)),))
        if type(expr) in (cst.Name, cst.IfExp):
            return None
        if type(expr) is cst.Attribute:
            # `opt.device_ids`: an option's default (`default="0"` split at commas is one item)
            # or a setting's value, as for the literals themselves.
            return self._attribute(flow, expr, ctx, order)
        if (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("list", "tuple")
                and flow.model.imports.qualify(expr.func) in (None, expr.func.value, "builtins." + expr.func.value)
                and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star):
            return flow.ask(self, expr.args[0].value, ctx, order)  # `list(range(args.ngpu))`: as many
        if (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "range"
                and flow.model.imports.qualify(expr.func) in (None, "range", "builtins.range")
                and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star):
            # `device_ids=range(args.ngpu)`: as many items as the count (an option's default
            # stays marked as one).
            count = flow.ask(LITERALS, expr.args[0].value, ctx, order)
            return _mapped([count], _range_length)
        return UNKNOWN


def _range_length(value: Tagged) -> int:
    if value[0] != "int":
        raise TypeError
    return max(0, value[1])


SEQUENCE_LENGTHS = SequenceLengths()


def sequence_lengths(model, expr: cst.BaseExpression, ctx: Context, order: Optional[float] = None) -> Literals:
    """The lengths of the list or tuple literals ``expr`` can be where it is read."""
    return model.values.ask(SEQUENCE_LENGTHS, expr, ctx, model.order_of(expr) if order is None else order)


# Operands with more values than this are not combined (the answer is then unknown).
_MAX_OPERAND_VALUES = 8
_COMPARE = {
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
    cst.LessThan: lambda a, b: a < b, cst.LessThanEqual: lambda a, b: a <= b,
    cst.GreaterThan: lambda a, b: a > b, cst.GreaterThanEqual: lambda a, b: a >= b,
    # `if "concat" in options.suffix:` where the option holds a string: a substring test (a
    # number on either side raises TypeError, and the answer stays unknown)
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
}


def _evaluated(flow: ValueFlow, question: LiteralValues, expr, ctx: Context, order: int) -> Literals:
    """`args.world_size > 1 or args.multiprocessing_distributed`, `not args.no_cuda`: the
    values the expression takes for every combination of its operands' known values (a
    command-line default stays marked as one)."""
    if type(expr) is cst.UnaryOperation:
        if type(expr.operator) is not cst.Not:
            return UNKNOWN
        inner = flow.ask(question, expr.expression, ctx, order)
        return _mapped([inner], lambda v: not v[1])
    if type(expr) is cst.BooleanOperation:
        left = flow.ask(question, expr.left, ctx, order)
        is_or = type(expr.operator) is cst.Or
        if left.complete and left.values and all(bool(v) is is_or for _, v in left.values):
            return left  # decided by the left operand alone (`False and ...`, `True or ...`)
        right = flow.ask(question, expr.right, ctx, order)
        return _mapped([left, right], lambda a, b: (a if a[1] else b) if is_or else (b if a[1] else a), tagged=True)
    if len(expr.comparisons) != 1 or type(expr.comparisons[0].operator) not in _COMPARE:
        return UNKNOWN
    compare = _COMPARE[type(expr.comparisons[0].operator)]
    left = flow.ask(question, expr.left, ctx, order)
    right = flow.ask(question, expr.comparisons[0].comparator, ctx, order)

    def compared(a, b):
        if {a[0], b[0]} <= {"int", "float", "bool"} or a[0] == b[0]:
            return compare(a[1], b[1])
        raise TypeError  # a str against a number: not a value this follower knows
    return _mapped([left, right], compared)


# Builtins and `str` methods that turn a setting's value into another (`int(opt.ngpu)`,
# `str(os.getenv("PIN_MEMORY", True)).lower() == "true"`), applied to each value.
_BUILTIN_CONVERSIONS = {"int": int, "str": str, "bool": bool}
_STR_METHODS = {"lower": str.lower, "upper": str.upper, "strip": str.strip}


def _converted(flow: ValueFlow, question: LiteralValues, expr: cst.Call, ctx: Context, order: int) -> Optional[Literals]:
    """The values of `int(x)`, `str(x)`, `bool(x)` or `x.lower()` for each value of `x`; None when
    the call is none of these (a helper of the project, or a builtin the program rebinds)."""
    func = expr.func
    if any(a.keyword is not None or a.star for a in expr.args):
        return None
    if type(func) is cst.Name and func.value in _BUILTIN_CONVERSIONS and len(expr.args) == 1:
        if flow.model.imports.qualify(func) is not None or flow.bindings.function(func.value, ctx, order) is not None:
            return None
        convert = _BUILTIN_CONVERSIONS[func.value]
        inner = flow.ask(question, expr.args[0].value, ctx, order)
        if func.value == "int" and inner.values and all(kind == "int" for kind, _ in inner.values):
            return inner  # `ngpu = int(opt.ngpu)`: whole numbers pass through, option and all
        if any(kind not in ("int", "bool", "str", "none", "float") for kind, _ in inner.values):
            return UNKNOWN  # a dtype: `str(torch.float16)` is not its qualified name
        return _mapped([inner], lambda v: convert(v[1]))
    if type(func) is cst.Attribute and func.attr.value in _STR_METHODS and not expr.args:
        inner = flow.ask(question, func.value, ctx, order)
        if not inner.values or any(kind != "str" for kind, _ in inner.values):
            return UNKNOWN
        method = _STR_METHODS[func.attr.value]
        return _mapped([inner], lambda v: method(v[1]))
    return None


def _mapped(answers, combine, tagged: bool = False) -> Literals:
    if not all(a.complete and a.values and len(a.values) <= _MAX_OPERAND_VALUES for a in answers):
        return UNKNOWN
    out = set()
    pools = [sorted(a.values, key=repr) for a in answers]
    combos = [(v,) for v in pools[0]] if len(pools) == 1 else [(a, b) for a in pools[0] for b in pools[1]]
    for combo in combos:
        try:
            value = combine(*combo)
        except (TypeError, ValueError):  # `int("auto")`
            return UNKNOWN
        out.add(value if tagged else tag(value))
    option = next((a.option for a in answers if a.option is not None), None)
    return known(out, option)
