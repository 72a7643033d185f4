"""`isinstance` tests that decide what a name holds on a path: in the body of
`if isinstance(x, float):`, or the `else` of `if not isinstance(x, float):`, `x` is a Python
number, whatever the value flow would say of it elsewhere. Likewise a name a function calls a
text-only method on (`name.startswith("itm")`) holds text there."""
from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from advisor.model.facts import Context
from advisor.model.names import dotted_name

_PYTHON_SCALARS = frozenset({"int", "float", "bool", "str", "complex", "numbers.Number", "numbers.Real"})


def python_scalar_here(name: str, ctx: Optional[Context], model=None) -> bool:
    """Some test around ``ctx`` holds only when ``name`` is a Python scalar (`int`, `float`, ...),
    or fails only when it is a tensor."""
    current = ctx
    seen = None
    while current is not None:
        guard = current.guard
        if guard is not None and guard is not seen:
            seen = guard
            holds = guard.positive and not guard.exits
            test = guard.test
            while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                test, holds = test.expression, not holds
            if holds and _isinstance_of_scalars(test, name):
                return True
            if not holds and model is not None and _tensor_test(model, test, name):
                return True  # the `else` of `if torch.is_tensor(seq_len):`: a plain value
        current = current.outer
    return False


def _tensor_test(model, test: cst.BaseExpression, name: str) -> bool:
    """`torch.is_tensor(name)` or `isinstance(name, torch.Tensor)` (the positive arm is
    `tensors.type_fallback`'s)."""
    if type(test) is not cst.Call or not test.args or dotted_name(test.args[0].value) != name:
        return False
    if len(test.args) == 1 and model.imports.qualify(test.func) == "torch.is_tensor":
        return True
    return (len(test.args) == 2 and dotted_name(test.func) == "isinstance"
            and model.imports.qualify(test.args[1].value) == "torch.Tensor")


def _isinstance_of_scalars(test: cst.BaseExpression, name: str) -> bool:
    if type(test) is not cst.Call or not (type(test.func) is cst.Name and test.func.value == "isinstance"):
        return False
    if len(test.args) != 2 or dotted_name(test.args[0].value) != name:
        return False
    kinds = test.args[1].value
    names = [e.value for e in kinds.elements] if type(kinds) is cst.Tuple else [kinds]
    return bool(names) and all(dotted_name(n) in _PYTHON_SCALARS for n in names)


# Annotations trusted to say a parameter holds no tensor: `float` is left out, since a loss is
# often annotated `loss: float` while it is still a tensor.
_ANNOTATED_SCALARS = frozenset({"int", "bool", "str"})
_SEQUENCES = frozenset({"List", "list", "Sequence", "Tuple", "tuple", "Iterable", "typing.List", "typing.Sequence",
                        "typing.Tuple"})


def annotated_python(flow, name: str, ctx: Context, order: float, element: bool = False) -> bool:
    """Every value the read may see comes from a parameter annotated as a Python scalar (`n:
    int`), or, with ``element``, as a sequence of them (`num_objects: List[int]`, then
    `num_objects[i]`): the author says what it holds, where the value flow may not follow.
    Each function's annotated parameters are read once, so the common read (of a name no such
    annotation covers) costs a lookup."""
    info = ctx.function
    if info is None:
        return False
    kind = _annotation_of(flow, info, name)
    if kind not in ("scalar", "sequence") or (kind == "sequence") != element:
        return False
    reach = flow.bindings.reaching(name, ctx, order)
    return reach.parameter is info and not reach.assignments


def parameter_annotation(flow, name: str, ctx: Context, order: float) -> Optional[str]:
    """"scalar" (`n: int`) or "tensor" (`targets: torch.Tensor`: a tensor, though not one whose
    device the annotation says) when every value the read may see comes from a parameter so
    annotated; None otherwise. One lookup for the common read of a name no annotation covers."""
    kind = annotated_kind(flow, name, ctx, order)
    return kind if kind in ("scalar", "tensor") else None


def annotated_kind(flow, name: str, ctx: Context, order: float) -> Optional[str]:
    """What the annotation of the parameter every value of the read comes from says it holds
    ("scalar", "sequence", "tensor", "iterable-dataset": see `_annotations`); None when the
    read may see anything else."""
    info = ctx.function
    if info is None:
        return None
    kind = _annotation_of(flow, info, name)
    if kind is None:
        return None
    reach = flow.bindings.reaching(name, ctx, order)
    return kind if reach.parameter is info and not reach.assignments else None


def _annotation_of(flow, info, name: str) -> Optional[str]:
    notes: Dict[int, Dict[str, str]] = flow.model.shared("python-annotations", lambda m: {})
    known = notes.get(id(info))
    if known is None:
        known = notes[id(info)] = _annotations(flow.model, info)
    return known.get(name)


def _annotations(model, info) -> Dict[str, str]:
    """{parameter: "scalar" | "sequence" | "tensor" | "iterable-dataset"} for the function's
    parameters annotated as Python values, as a tensor, or as a dataset that streams itself."""
    out: Dict[str, str] = {}
    params = info.node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.annotation is None:
            continue
        note = param.annotation.annotation
        kind = _python_annotation(note)
        if kind is None and model.imports.qualify(note) in _TENSOR_ANNOTATIONS:
            kind = "tensor"
        if kind is None:
            kind = _container_annotation(model, note)
        if kind is None and (dotted_name(note) or "").rsplit(".", 1)[-1] == "IterableDataset":
            kind = "iterable-dataset"  # `def run_training(self, dataset: IterableDataset)`
        if kind is not None:
            out[param.name.value] = kind
    return out


_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor"})

# Dict types, by their last name (`typing.Mapping`, `collections.abc.MutableMapping`).
_MAPPINGS = frozenset({"Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict"})


def _container_annotation(model, note: cst.BaseExpression) -> Optional[str]:
    """"tensor-container" for a dict or sequence annotated as holding tensors (`losses:
    Mapping[str, torch.Tensor]`, `feats: List[Tensor]`), "container" for any other dict or
    sequence (`cfg: dict`); None for anything else. Python decides the truth of either, never
    the device."""
    base = note.value if type(note) is cst.Subscript else note
    name = dotted_name(base)
    if name is None:
        return None
    last = name.rsplit(".", 1)[-1]
    mapping = last in _MAPPINGS
    if not mapping and name not in _SEQUENCES and last not in ("List", "Sequence", "Tuple"):
        return None
    if type(note) is not cst.Subscript:
        return "container"
    items = [e.slice.value for e in note.slice if type(e.slice) is cst.Index]
    held = items[-1:] if mapping else [i for i in items if type(i) is not cst.Ellipsis]
    if held and all(model.imports.qualify(i) in _TENSOR_ANNOTATIONS for i in held):
        return "tensor-container"
    return "container"


def _python_annotation(note: cst.BaseExpression) -> Optional[str]:
    if dotted_name(note) in _ANNOTATED_SCALARS:
        return "scalar"
    if type(note) is not cst.Subscript or dotted_name(note.value) not in _SEQUENCES:
        return None
    items = [e.slice.value for e in note.slice if type(e.slice) is cst.Index]
    if items and all(dotted_name(i) in _ANNOTATED_SCALARS or type(i) is cst.Ellipsis for i in items):
        return "sequence"
    return None


# Methods only text has (a tensor has `split`, but not with a separator string).
_TEXT_ONLY_METHODS = frozenset({
    "strip", "lstrip", "rstrip", "lower", "upper", "splitlines", "startswith", "endswith", "casefold", "title",
    "isdigit", "isalpha", "isalnum", "rsplit", "partition", "rpartition", "format", "encode",
})


def used_as_text(model, name: str, ctx: Context) -> bool:
    """In the function around ``ctx``, ``name`` is the receiver of a method only text has
    (`task = name.split('_')[0]`, `name.startswith('itm')`): it holds a string, whatever the
    loop it is unpacked from hands out beside it (`for step, (name, batch) in loader`)."""
    index = model.shared("text-names", _text_names)
    return (id(ctx.function), name) in index


def _text_names(model) -> frozenset:
    out = set()
    for method, sites in model.facts.calls_by_method.items():
        text_only = method in _TEXT_ONLY_METHODS
        if not text_only and method not in ("split", "replace"):
            continue
        for site in sites:
            if site.receiver_name is None or "." in site.receiver_name:
                continue
            args = site.node.args
            if text_only or (args and type(args[0].value) in (cst.SimpleString, cst.FormattedString)):
                out.add((id(site.ctx.function), site.receiver_name))
    return frozenset(out)
