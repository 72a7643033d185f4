"""Helpers shared by the compilation rules."""

from __future__ import annotations
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple
import libcst as cst
from advisor.model import FileModel
from advisor.model.facts import MODULE_SCOPE, Context, FunctionInfo
from advisor.model.instances import COMPILE, JIT, instance_classes
from advisor.model.file_model import call_argument
from advisor.model.names import dotted_name
from advisor.model.walk import children
from advisor.rules.compilation.body_scan import BUILTINS


PARTIAL = frozenset({"functools.partial"})


# Methods that return the module they are called on (`Net().cuda()`, `model.to(device)`).
SAME_OBJECT_METHODS = frozenset({"to", "cuda", "half", "float", "bfloat16", "train", "eval", "cpu", "requires_grad_"})


@dataclass
class CompileFacts:
    compiled_functions: Set[str] = field(default_factory=set)  # function keys traced by torch.compile
    compiled_classes: Set[str] = field(default_factory=set)  # classes whose forward torch.compile traces
    fused_classes: Set[str] = field(default_factory=set)  # compiled or scripted (torch.jit) classes
    unresolved_module_compile: bool = False  # a model of unknown class is compiled or scripted
    decorator_calls: Set[int] = field(default_factory=set)  # ids of `@torch.compile(...)` Call nodes
    aliases: Set[str] = field(default_factory=set)  # module-level names bound to torch.compile


def is_compile_expr(model: FileModel, expr: cst.BaseExpression, aliases: Set[str]) -> bool:
    """`torch.compile`, an alias of it, `torch.compile(mode=...)` (a decorator factory) or
    `functools.partial(torch.compile, ...)`."""
    if type(expr) is cst.Call:
        qual = model.imports.qualify(expr.func)
        if qual in PARTIAL and expr.args:
            return is_compile_expr(model, expr.args[0].value, aliases)
        positional = [a for a in expr.args if a.keyword is None and not a.star]
        return not positional and is_compile_expr(model, expr.func, aliases)
    return model.imports.qualify(expr) in COMPILE or (dotted_name(expr) or "") in aliases


def compile_aliases(model: FileModel) -> Set[str]:
    aliases: Set[str] = set()
    for (scope, target), found in model.facts.assignments.items():
        if scope != MODULE_SCOPE or "." in target:
            continue
        values = [a.value for a in found if a.value is not None and a.index is None]
        if values and all(is_compile_expr(model, v, set()) for v in values):
            aliases.add(target)
    return aliases


def decorated_with(model: FileModel, info: FunctionInfo, aliases: Set[str]) -> bool:
    return any(is_compile_expr(model, d.decorator, aliases) for d in info.node.decorators)


def disabled(info: FunctionInfo) -> bool:
    """`@torch.compiler.disable` / `@torch._dynamo.disable`: meant to run eagerly."""
    return any(d.rsplit(".", 1)[-1] == "disable" for d in info.decorators)


def first_argument(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    arg = call_argument(call, keyword, 0)
    return None if arg is None else arg.value


def class_closure(model: FileModel, roots: Set[str]) -> Set[str]:
    """The classes whose code runs when a module of a root class runs: its submodules (classes
    of this file built in its methods) and its base classes of this file."""
    contains: Dict[str, Set[str]] = {}
    for site in model.facts.calls:
        owner = site.ctx.class_name
        func = site.node.func
        if owner and type(func) is cst.Name and func.value in model.facts.classes and site.qualname is None:
            contains.setdefault(owner, set()).add(func.value)
    out: Set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in out or name not in model.facts.classes:
            continue
        out.add(name)
        stack.extend(contains.get(name, ()))
        stack.extend(b for b in model.facts.classes[name].bases if b in model.facts.classes)
    return out


def compile_facts(model: FileModel) -> CompileFacts:
    """What the file compiles; computed once per file and shared by the GPU70x rules."""
    return model.shared("compilation", compute_compile_facts)


def compute_compile_facts(model: FileModel) -> CompileFacts:
    facts = CompileFacts(aliases=compile_aliases(model))
    for info in model.facts.functions.values():
        for decorator in info.node.decorators:
            if type(decorator.decorator) is cst.Call:
                facts.decorator_calls.add(id(decorator.decorator))
        if decorated_with(model, info, facts.aliases):
            facts.compiled_functions.add(info.key)
    precise: Set[str] = set()
    fused: Set[str] = set()
    sites = [s for s in model.calls_to(*COMPILE, *JIT) if id(s.node) not in facts.decorator_calls]
    for site in sites:
        is_compile = site.qualname in COMPILE
        target = first_argument(site.node, "model" if is_compile else "obj")
        if target is None:
            continue  # `torch.compile(mode=...)`: a decorator factory
        function = function_named(model, target, site.ctx)
        if function is not None:
            if is_compile:
                facts.compiled_functions.add(function.key)
            continue
        classes = instance_classes(model, target, site.ctx, site.order)
        if classes is None:
            facts.unresolved_module_compile = True
            continue
        fused |= classes
        if is_compile:
            precise |= classes
    for site in model.method_calls("compile"):
        if site.qualname is not None or site.receiver is None:
            continue  # `re.compile(...)`
        classes = instance_classes(model, site.receiver, site.ctx, site.order)
        if classes is None:
            facts.unresolved_module_compile = True
        else:
            precise |= classes
            fused |= classes
    facts.compiled_classes = class_closure(model, precise)
    facts.fused_classes = class_closure(model, fused)
    # Dynamo also traces the modules a compiled function calls: `model(x)` in a compiled step.
    called: Set[str] = set()
    traced = traced_functions(model, facts)
    for site in model.facts.calls:
        function = site.ctx.function
        if function is None or function.key not in traced or site.qualname is not None:
            continue
        func = site.node.func
        if type(func) is cst.Name:
            if func.value in BUILTINS or func.value in model.facts.functions or func.value in model.facts.classes:
                continue
        elif type(func) is cst.Attribute and dotted_name(func.value) == "self" and function.class_name:
            if function.class_name in facts.compiled_classes:
                continue  # submodules of a compiled class are in the closure already
            if f"{function.class_name}.{func.attr.value}" in model.facts.functions:
                continue
        else:
            continue
        classes = instance_classes(model, func, site.ctx, site.order)
        if classes is None:
            facts.unresolved_module_compile = True
        else:
            called |= classes
    if called:
        facts.compiled_classes |= class_closure(model, called)
        facts.fused_classes |= class_closure(model, called)
    return facts


def function_named(model: FileModel, expr: cst.BaseExpression, ctx: Context) -> Optional[FunctionInfo]:
    """`torch.compile(train_step)` / `torch.compile(self.step)`: a function of this file."""
    if type(expr) is cst.Name and model.imports.qualify(expr) is None:
        info = model.facts.functions.get(expr.value)
        if info is not None and info.class_name is None:
            # A name that is also assigned a model is not the function.
            if not model.assignments(expr.value, ctx):
                return info
        return None
    if type(expr) is cst.Attribute and dotted_name(expr.value) == "self" and ctx.class_name:
        return model.facts.functions.get(f"{ctx.class_name}.{expr.attr.value}")
    return None


def traced_functions(model: FileModel, facts: CompileFacts) -> Dict[str, str]:
    """Function keys that run inside a compiled graph, mapped to the compiled entry point."""
    out: Dict[str, str] = {}
    stack: List[Tuple[str, str]] = [(key, key) for key in sorted(facts.compiled_functions)]
    for name in sorted(facts.compiled_classes):
        if f"{name}.forward" in model.facts.functions:
            stack.append((f"{name}.forward", f"{name}.forward"))
    while stack:
        key, entry = stack.pop()
        info = model.facts.functions.get(key)
        if key in out or info is None or disabled(info):
            continue
        out[key] = entry
        for callee in info.callees:
            # Plain functions and methods of the same class: Dynamo inlines both.
            if "." not in callee or (info.class_name and callee.startswith(info.class_name + ".")):
                if callee in model.facts.functions:
                    stack.append((callee, entry))
    return out


def enclosing_tests(root: cst.CSTNode, target: cst.CSTNode) -> Optional[List[cst.BaseExpression]]:
    """The tests of the `if` statements (and `a if c else b`) between ``root`` and ``target``, or
    None when ``target`` is not inside ``root``. Nested functions and classes are not entered."""
    stack: List[Tuple[cst.CSTNode, Tuple[cst.BaseExpression, ...]]] = [(root, ())]
    while stack:
        node, tests = stack.pop()
        if node is target:
            return list(tests)
        if node is not root and type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) in (cst.If, cst.IfExp):
            inner = tests + (node.test,)
            stack.append((node.test, tests))
            stack.append((node.body, inner))
            if node.orelse is not None:
                stack.append((node.orelse, inner))
            continue
        stack.extend((child, tests) for child in children(node))
    return None


def trains_somewhere(model: FileModel) -> bool:
    return any(model.is_training_loop(loop) for loop in model.facts.loops)
