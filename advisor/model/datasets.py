"""Datasets that hold their samples in memory: a class of the project whose `__getitem__` only
indexes lists or tensors its `__init__` built (`self.data = [(torch.rand(20), torch.rand(1)) ...]`,
`return self.data[index]`), as `TensorDataset` does. Loading such a sample costs next to nothing,
so worker processes have nothing to take off the training process.

A `__getitem__` that calls anything (opens a file, decodes an image, tokenises, applies a
transform), branches, or indexes an attribute `__init__` did not build in memory (a path list's
files, an h5py or memory-mapped array, a Hugging Face dataset, a parameter) is not one.
"""

from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from advisor.model.facts import ClassInfo, Context
from advisor.model.instances import INSTANCES
from advisor.model.walk import children

_IN_MEMORY_VALUES = (cst.List, cst.ListComp, cst.Tuple, cst.Dict, cst.DictComp)


def holds_in_memory(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is an instance of a project class that holds its samples in memory."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    return known and bool(found) and all(_class_in_memory(owner, info) for owner, info in found)


def _class_in_memory(owner, info: ClassInfo) -> bool:
    getitem = owner.facts.functions.get(f"{info.name}.__getitem__")
    init = owner.facts.functions.get(f"{info.name}.__init__")
    if getitem is None or init is None or len(getitem.params) < 2:
        return False
    held = _attributes_built(owner, init.node)
    bound: Set[str] = set()
    returned = False
    for index, statement in enumerate(getitem.node.body.body):
        if not type(statement) is cst.SimpleStatementLine or len(statement.body) != 1:
            return False
        small = statement.body[0]
        if index == 0 and type(small) is cst.Expr and type(small.value) is cst.SimpleString:
            continue  # the docstring
        if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name:
            if not _indexes(small.value, held, bound):
                return False
            bound.add(small.targets[0].target.value)
        elif type(small) is cst.Return and small.value is not None:
            if not _indexes(small.value, held, bound):
                return False
            returned = True
        else:
            return False
    return returned


def _attributes_built(owner, init: cst.FunctionDef) -> Set[str]:
    """`self.x` attributes every assignment of the `__init__` body binds to a list, tuple or dict
    (literal or comprehension) or to a torch call (`torch.rand`, `torch.load`, `torch.stack`)."""
    built: Set[str] = set()
    other: Set[str] = set()
    for statement in init.body.body:
        if not type(statement) is cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if not type(small) in (cst.Assign, cst.AnnAssign) or small.value is None:
                continue
            targets = [t.target for t in small.targets] if type(small) is cst.Assign else [small.target]
            for target in targets:
                attribute = _self_attribute(target)
                if attribute is not None:
                    (built if _built_in_memory(owner, small.value) else other).add(attribute)
    return built - other


def _built_in_memory(owner, value: cst.BaseExpression) -> bool:
    if isinstance(value, _IN_MEMORY_VALUES):
        return True
    if type(value) is cst.Call:
        qualname = owner.imports.qualify(value.func) or ""
        return qualname.startswith("torch.") and not qualname.startswith("torch.utils.")
    return False


def _self_attribute(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
        return expr.attr.value
    return None


def _indexes(expr: cst.BaseExpression, held: Set[str], bound: Set[str]) -> bool:
    """The expression only indexes attributes held in memory (or names bound to such an index),
    and calls nothing."""
    if type(expr) is cst.Tuple:
        return bool(expr.elements) and all(_indexes(e.value, held, bound) for e in expr.elements)
    if type(expr) is cst.Name:
        return expr.value in bound
    if not type(expr) is cst.Subscript or _calls(expr.slice):
        return False
    base = expr.value
    while type(base) is cst.Subscript:
        if _calls(base.slice):
            return False
        base = base.value
    return _self_attribute(base) in held


def _calls(nodes) -> bool:
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            return True
        stack.extend(children(node))
    return False
