"""Which classes of the file a value holds an instance of: `model = Net()`, through wrappers that
keep the module (`torch.compile(model)`, DDP, `.to(device)`), containers built from the file's
classes (`nn.Sequential(Block(), ...)`), helpers and parameters.

An answer is the classes, as (model of the file that defines it, ClassInfo) pairs, and whether
they are all the value can be. A class of another project module counts as much as the file's own.
"""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from advisor.model.config_targets import configured_classes, looks_up_imported
from advisor.model.facts import Assignment, Context
from advisor.model.names import DDP_WRAPPERS
from advisor.model.value_flow import Question, ValueFlow, argument
from advisor.model.vocabulary import SAME_MODULE_FUNCTIONS, SAME_OBJECT_METHODS
from advisor.model.walk import children

Classes = Tuple[FrozenSet[tuple], bool]
_UNKNOWN: Classes = (frozenset(), False)
COMPILE = frozenset({"torch.compile", "torch.compiler.compile"})
JIT = frozenset({"torch.jit.script", "torch.jit.trace"})
CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
# Class methods that build an instance of the class they are called on (Hugging Face and
# Lightning checkpoints).
ALTERNATE_CONSTRUCTORS = frozenset({"from_pretrained", "from_config", "load_from_checkpoint"})
# Methods that return the module they are called on (`model.requires_grad_(False)` too).
_SAME_MODULE_METHODS = SAME_OBJECT_METHODS | {"requires_grad_"}


def constructed_classes(model, call: cst.Call) -> FrozenSet[str]:
    """Classes of this file built in a container's arguments (a small subtree)."""
    out = set()
    stack: List[cst.CSTNode] = [call]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value in model.facts.classes:
            out.add(node.func.value)
        stack.extend(children(node))
    return frozenset(out)


def _local(model, names) -> FrozenSet[tuple]:
    return frozenset((model, model.facts.classes[n]) for n in names)


class InstanceClasses(Question[Classes]):
    key = "instances"
    unknown = _UNKNOWN
    skips_dead = True  # `self.net = networks.L2()` under a setting no construction passes

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Classes]:
        if type(expr) is cst.Name and expr.value == "self":
            return _own_class(flow.model, ctx)
        if not type(expr) is cst.Call:
            return None
        model = flow.model
        func = expr.func
        qual = model.imports.qualify(func)
        if qual is None and type(func) is cst.Name and func.value in model.facts.classes:
            return _local(model, (func.value,)), True
        if type(func) is cst.Name and func.value == "cls":
            made = _cls_class(model, ctx)
            if made is not None:
                return made
        symbol = model.symbol(qual) if qual is not None else None
        if symbol is not None and symbol.kind == "class":
            others = model.imports.targets.get(func.value, ()) if type(func) is cst.Name else ()
            if len(others) > 1:
                # `from .model_plain import ModelPlain as M` in one branch of a factory, another
                # class as `M` in the next: an instance of either.
                found = {(symbol.model, symbol.info)}
                for other in others:
                    built = model.symbol(other)
                    if built is not None and built.kind == "class":
                        found.add((built.model, built.info))
                return frozenset(found), True
            return frozenset({(symbol.model, symbol.info)}), True
        if qual in COMPILE or qual in JIT or qual in DDP_WRAPPERS or qual in SAME_MODULE_FUNCTIONS:
            inner = argument(expr, "model" if qual in COMPILE else "module", 0)
            return _UNKNOWN if inner is None else flow.ask(self, inner.value, ctx, order)
        if qual is None and type(func) is cst.Attribute and func.attr.value in _SAME_MODULE_METHODS:
            return flow.ask(self, func.value, ctx, order)
        if qual in CONTAINERS:
            return _local(model, constructed_classes(model, expr)), True
        if qual is not None and qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper():
            return frozenset(), True  # a torch.nn layer: holds none of this file's classes
        if type(func) is cst.Attribute and func.attr.value in ALTERNATE_CONSTRUCTORS:
            # `JointBERT.from_pretrained(path)`, `self.model_class.from_pretrained(path)` of a
            # class picked from a registry: an instance of the class it is called on.
            made = flow.ask(CLASS_OBJECTS, func.value, ctx, order)
            if made[0]:
                return made
        if flow.callee(expr, ctx, order) is not None:
            return None  # what the helper returns (this file's, or another project module's)
        if qual is None and type(func) is cst.Call:
            # `get_obj_from_str(config["target"])(**params)`, `get_class(name)(conf=conf)`: an
            # instance of the class the helper hands back.
            return flow.ask(CLASS_OBJECTS, func, ctx, order)
        if qual is None and type(func) in (cst.Name, cst.Subscript):
            # `TaskDataset = dataset_class(task)`, then `TaskDataset(path)`, or `{"erm": ERM,
            # "dro": GroupDRO}[method](args)`: a class picked from a registry the project writes
            # out.
            return flow.ask(CLASS_OBJECTS, func, ctx, order)
        return _UNKNOWN

    def combine(self, answers: Sequence[Classes]) -> Classes:
        names = frozenset().union(*(found for found, _ in answers))
        return names, all(known for _, known in answers)

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> Classes:
        return _UNKNOWN


def _own_class(model, ctx: Context) -> Optional[Classes]:
    """`self` in a method: an instance of the class (or of a subclass: not all it can be), as
    in `model = self.train()`, then `model(x)` in a base class's `fit` loop."""
    info = ctx.function
    if info is None or info.class_name is None or not info.receiver_params or not info.params or info.params[0] != "self":
        return None
    cls = model.facts.classes.get(info.class_name)
    if cls is None or model.bindings.reaching("self", ctx, model.order_of(info.node.body)).assignments:
        return None
    return frozenset({(model, cls)}), False


def _cls_class(model, ctx: Context) -> Optional[Classes]:
    """`cls(...)` in a class method (`NestedTensor.from_tensor_list` returning `cls(tensor,
    mask)`): an instance of the class, or of a subclass the method is called on (not all it can
    be)."""
    info = ctx.function
    if info is None or info.class_name is None or not info.params or info.params[0] != "cls":
        return None
    cls = model.facts.classes.get(info.class_name)
    if cls is None or model.bindings.reaching("cls", ctx, model.order_of(info.node.body)).assignments:
        return None
    return frozenset({(model, cls)}), False


INSTANCES = InstanceClasses()


def instance_classes(model, expr: cst.BaseExpression, ctx: Context, order: float) -> Optional[FrozenSet[str]]:
    """The classes of this file the expression holds an instance of; None when some path is
    not known (or a helper returns none of them)."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    if not known or any(owner is not model for owner, _ in found):
        return None
    return frozenset(info.name for _, info in found)


def instances_of(model, expr: cst.BaseExpression, ctx: Context, order: float) -> FrozenSet[tuple]:
    """The classes (this file's or another project module's) some path of the value is an
    instance of, as (model, ClassInfo) pairs."""
    return model.values.ask(INSTANCES, expr, ctx, order)[0]


def plain_objects_of(model, expr: cst.BaseExpression, ctx: Context, order: float) -> Tuple[tuple, ...]:
    """The project classes the value holds an instance of, when every path is known and every
    one of them is a plain class (no base but `object`): a wrapper of the project's own (an
    engine runner, a client), not a torch module, whatever its name. Empty otherwise."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    if not known or not found:
        return ()
    if any(info.bases and tuple(info.bases) != ("object",) for _, info in found):
        return ()
    return tuple(found)


class ClassObjects(Question[Classes]):
    """Which classes of the project a value is (the class itself, not an instance): a class's
    name, a dict or list of them subscripted (`{"mrpc": MRPC, "mnli": MNLI}[task]`), a helper
    returning one of those."""

    key = "class-objects"
    unknown = _UNKNOWN
    skips_dead = True
    follows_imports = True  # `from utils import MODEL_CLASSES`: a registry another module writes

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Classes]:
        model = flow.model
        if type(expr) in (cst.Name, cst.Attribute):
            qual = model.imports.qualify(expr)
            if qual is None and type(expr) is cst.Name and expr.value in model.facts.classes:
                return _local(model, (expr.value,)), True
            symbol = model.symbol(qual) if qual is not None else None
            if symbol is not None and symbol.kind == "class":
                return frozenset({(symbol.model, symbol.info)}), True
            if symbol is not None and symbol.kind == "value" and type(expr) is cst.Name:
                return None  # a module-level value of another project module: what it holds
            # `self.model_class`: what the attribute is bound to, as a name is followed.
            return None if qual is None else _UNKNOWN
        if type(expr) is cst.Subscript:
            if _module_namespace(model, expr.value):
                # `globals()[name]` (DomainBed's `get_algorithm_class`): one of the module's
                # classes, or some other global of it.
                return _local(model, tuple(model.facts.classes)), False
            exported = _package_namespace(model, expr.value)
            if exported is not None:
                # `models.__dict__[cfg.type](**params)`: one of the classes the project package
                # defines or imports, or some other name of it.
                return exported, False
            return flow.ask(self, expr.value, ctx, order)
        if type(expr) is cst.Dict:
            values = [e.value for e in expr.elements if type(e) is cst.DictElement]
            if not values or len(values) != len(expr.elements):
                return _UNKNOWN
            return self.combine([flow.ask(self, v, ctx, order) for v in values])
        if type(expr) in (cst.List, cst.Tuple):
            values = [e.value for e in expr.elements if type(e) is cst.Element]
            if not values or len(values) != len(expr.elements):
                return _UNKNOWN
            return self.combine([flow.ask(self, v, ctx, order) for v in values])
        if type(expr) is cst.Call:
            looked_up = _looked_up_class(model, expr)
            if looked_up is not None:
                return looked_up, False
            if looks_up_imported(model, expr, ctx, order):
                # `getattr(importlib.import_module(module), cls)` of a path from a config: one of
                # the classes the project's config files name.
                return configured_classes(model), False
            if flow.callee(expr, ctx, order) is not None:
                return None
        return _UNKNOWN

    def element(self, flow: ValueFlow, expr, index: int, ctx: Context, order: int) -> Optional[Classes]:
        """`config_class, model_class, tokenizer_class = MODEL_CLASSES[args.model_type]`: element
        ``index`` of each entry of the registry (a dict of tuples); a dict display reached that
        way gives element ``index`` of each of its values."""
        if type(expr) is cst.Subscript and not _module_namespace(flow.model, expr.value):
            key = expr.slice[0].slice if len(expr.slice) == 1 else None
            if type(key) is not cst.Index or type(key.value) in (cst.Integer, cst.UnaryOperation):
                return None  # `pairs[0]` of a list: its own first element, not each entry's
            return flow.ask(self, expr.value, ctx, order, index)
        if type(expr) is cst.Dict:
            values = [e.value for e in expr.elements if type(e) is cst.DictElement]
            if not values or len(values) != len(expr.elements):
                return _UNKNOWN
            return self.combine([flow.ask(self, v, ctx, order, index) for v in values])
        return None

    def combine(self, answers: Sequence[Classes]) -> Classes:
        return INSTANCES.combine(answers)

    def unbound(self, flow: ValueFlow, assignment: Assignment) -> Classes:
        return _UNKNOWN


CLASS_OBJECTS = ClassObjects()


def _package_namespace(model, expr: cst.BaseExpression) -> Optional[FrozenSet[tuple]]:
    """`models.__dict__` (or `vars(models)`) of a project module: the classes that module
    defines, and those of other project modules it imports, by name or with `*` (a package's
    `__init__` that gathers its architectures). None for any other expression."""
    if type(expr) is cst.Attribute and expr.attr.value == "__dict__":
        held = expr.value
    elif (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "vars"
          and len(expr.args) == 1 and model.imports.qualify(expr.func) is None):
        held = expr.args[0].value
    else:
        return None
    return _exported_classes(model, held)


def _looked_up_class(model, call: cst.Call) -> Optional[FrozenSet[tuple]]:
    """`getattr(algorithm, spec["name"])` of a project module, with a name given at run time:
    the classes that module defines or imports (see `_exported_classes`). None otherwise."""
    func = call.func
    if type(func) is not cst.Name or func.value != "getattr" or model.imports.qualify(func) is not None:
        return None
    if len(call.args) != 2 or any(a.keyword is not None or a.star for a in call.args):
        return None
    if type(call.args[1].value) is cst.SimpleString:
        return None  # `getattr(models, "ResNet")`: one name, which the follower reads as an attribute
    return _exported_classes(model, call.args[0].value)


def _exported_classes(model, held: cst.BaseExpression) -> Optional[FrozenSet[tuple]]:
    qual = model.imports.qualify(held)
    symbol = model.symbol(qual) if qual is not None else None
    if symbol is None or symbol.kind != "module":
        return None
    package = symbol.model
    found = set(_local(package, tuple(package.facts.classes)))
    for name, target in package.imports.aliases.items():
        other = package.symbol(target)
        if other is not None and other.kind == "class":
            found.add((other.model, other.info))
    for module in package.imports.star_modules:
        # `from .reinforce import *` in a package's `__init__`: every class of that module.
        other = package.symbol(module)
        if other is not None and other.kind == "module" and other.model is not package:
            found.update(_local(other.model, tuple(other.model.facts.classes)))
    return frozenset(found)


def _module_namespace(model, expr: cst.BaseExpression) -> bool:
    """`globals()` or `vars()` with no argument: the module's own namespace."""
    return (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("globals", "vars")
            and not expr.args and model.imports.qualify(expr.func) is None
            and expr.func.value not in model.facts.functions)
