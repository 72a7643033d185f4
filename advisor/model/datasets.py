"""Datasets that hold their samples in memory: a class of the project whose `__getitem__` only
indexes lists or tensors its `__init__` built (`self.data = [(torch.rand(20), torch.rand(1)) ...]`,
`return self.data[index]`), as `TensorDataset` does. Loading such a sample costs next to nothing,
so worker processes have nothing to take off the training process. What `__init__` keeps from a
parameter counts when every construction hands it a value built in memory (`torch.from_numpy(x)`)
or the parameter is annotated as a list or a tensor; `__getitem__` may draw a random position
(`torch.randint(...)`) and convert what it indexed (`.long()`, `.type(torch.int64)`).

A `__getitem__` that calls anything (opens a file, decodes an image, tokenises, applies a
transform), branches, or indexes an attribute `__init__` did not build in memory (a path list's
files, an h5py or memory-mapped array, a Hugging Face dataset, a parameter) is not one.
"""

from __future__ import annotations

import re
from typing import FrozenSet, Optional, Set, Tuple

import libcst as cst

from advisor.model.devices import HOST, device_kind
from advisor.model.facts import ClassInfo, Context, bound_element
from advisor.model.calls import class_method
from advisor.model.containers import DICT_CONTENTS, every_value
from advisor.model.instances import INSTANCES, instances_of
from advisor.model.named_methods import project_methods_named
from advisor.model.names import dotted_name
from advisor.model.tensors import moves_to_device
from advisor.model.value_flow import Question, argument
from advisor.model.walk import children

_IN_MEMORY_VALUES = (cst.List, cst.ListComp, cst.Tuple, cst.Dict, cst.DictComp)


def holds_in_memory(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is an instance of a project class that holds its samples in memory."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    return known and bool(found) and all(_class_in_memory(*_sample_class(owner, info)) for owner, info in found)


def _sample_class(owner, info: ClassInfo):
    """The class whose `__getitem__` and `__init__` a subclass inherits (`class MRPC(CsvDataset):
    labels = ...`), when one class defines both; else the class itself."""
    getitem = class_method(owner, info, "__getitem__")
    if getitem is None:
        return owner, info
    defining = getitem[0].facts.classes.get(getitem[1].class_name or "")
    if defining is None or defining.scope != getitem[1].class_scope:
        return owner, info
    init = class_method(owner, info, "__init__")
    if init is None:
        return owner, info
    if init[0] is not getitem[0] or init[1].class_scope != getitem[1].class_scope:
        # `def __init__(self, file, pipeline=[]): super().__init__(file, pipeline)` hands all
        # the building to the class that defines `__getitem__`.
        if not _only_calls_base_init(init[1].node) or class_method(getitem[0], defining, "__init__") is None:
            return owner, info
    return getitem[0], defining


def _only_calls_base_init(node: cst.FunctionDef) -> bool:
    statements = list(node.body.body)
    if statements and type(statements[0]) is cst.SimpleStatementLine and len(statements[0].body) == 1 \
            and type(statements[0].body[0]) is cst.Expr and type(statements[0].body[0].value) is cst.SimpleString:
        statements = statements[1:]  # the docstring
    if len(statements) != 1 or type(statements[0]) is not cst.SimpleStatementLine or len(statements[0].body) != 1:
        return False
    small = statements[0].body[0]
    return (type(small) is cst.Expr and type(small.value) is cst.Call and type(small.value.func) is cst.Attribute
            and small.value.func.attr.value == "__init__")


def holds_token_windows(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is such an in-memory dataset whose `__getitem__` hands out
    integer ids (`self.data[start: start + seq_len + 1].long()`): a window of token ids, a few
    kilobytes a batch."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    return known and bool(found) and all(
        _class_in_memory(*sample) and _hands_out_ids(*sample) for sample in (_sample_class(*f) for f in found)
    )


def tokenises_per_item(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is a dataset whose `__getitem__` tokenises its text (a call of a
    tokenizer: `self.tokenizer.tokenize(text)`, `tokenizer(text, ...)`) and builds only tensors of
    an integer dtype (`torch.tensor(ids, dtype=torch.long)`, its mask and labels): a batch of
    token ids, a few kilobytes."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    return known and bool(found) and all(_tokenises_to_ids(*_sample_class(*f)) for f in found)


def tokenised_by_transform(model, expr: cst.BaseExpression, ctx: Context, order: float, depth: int = 0) -> bool:
    """Every binding of the dataset that reaches the loader builds it with a `transform=` that
    tokenises each item into ids (`transform=prep`, where `prep` returns `torch.tensor([vocab[t]
    for t in tokenizer(text)], dtype=torch.int64)`): its items are token ids, a few kilobytes.
    A concatenation (`in_test + out_test`) is when both parts are."""
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Add and depth < 4:
        return (tokenised_by_transform(model, expr.left, ctx, order, depth + 1)
                and tokenised_by_transform(model, expr.right, ctx, order, depth + 1))
    values = [expr]
    if type(expr) is cst.Name:
        reach = model.bindings.reaching(expr.value, ctx, order)
        if not reach.closed or reach.parameter is not None or not reach.assignments:
            return False
        values = [a.value for a in reach.assignments]
    for value in values:
        transform = argument(value, "transform", None) if type(value) is cst.Call else None
        functions = _function_named(model, transform.value) if transform is not None else []
        if not functions:
            return False
        for owner, info in functions:
            found = _id_tensors(owner, info.node.body, _TENSOR_MAKERS)
            if found is None or not found[0] or found[1] == 0:
                return False
    return True


def token_id_batches(model, call: cst.Call, ctx: Context, order: float) -> bool:
    """The loader's batches are token ids, a few kilobytes: its `collate_fn` (a project function,
    or a `partial` of one) tokenises text (`tokenizer(texts, return_tensors="pt")`) or packs
    lists of ids into integer tensors, and builds no tensor of another kind; or, without one,
    its dataset tokenises each item (`tokenises_per_item`)."""
    found = _packing_functions(model, call, ctx, order)
    if found:
        return all(_packs_ids(owner, info.node) for owner, info in found)
    dataset = argument(call, "dataset", 0)
    return (argument(call, "collate_fn", None) is None and dataset is not None
            and tokenises_per_item(model, dataset.value, ctx, order))


def _packs_ids(owner, node: cst.CSTNode) -> bool:
    """The function calls a tokenizer or builds integer tensors, and builds no other tensor
    (no stack or concatenation of whatever the items hold either)."""
    found = _id_tensors(owner, node, _TENSOR_MAKERS | _TENSOR_BUILDERS)
    return found is not None and (found[0] or found[1] > 0)


def _tokenises_to_ids(owner, info: ClassInfo) -> bool:
    getitem = owner.facts.functions.get(f"{info.name}.__getitem__")
    if getitem is None:
        return False
    found = _id_tensors(owner, getitem.node.body, _TENSOR_MAKERS)
    return found is not None and found[0] and found[1] > 0


def _id_tensors(owner, node: cst.CSTNode, makers: FrozenSet[str]) -> Optional[Tuple[bool, int]]:
    """(whether the code under ``node`` calls a tokenizer, how many tensors of an integer dtype
    it makes with ``makers``); None when one of them makes a tensor of another dtype (pixels,
    features)."""
    tokenises, built = False, 0
    converted: Set[int] = set()  # makers whose result is converted to an integer dtype
    stack = list(children(node))
    while stack:
        current = stack.pop()
        if type(current) is cst.Call:
            name = dotted_name(current.func) or ""
            if "tokeniz" in name.lower():
                tokenises = True
            if (type(current.func) is cst.Attribute and current.func.attr.value in _ID_CONVERSIONS
                    and type(current.func.value) is cst.Call):
                converted.add(id(current.func.value))  # `torch.stack(labels).long()`
            qual = owner.imports.qualify(current.func) or name
            if qual in _PADDERS and _pads_id_fields(current):
                built += 1  # `pad_sequence([e["input_ids"] for e in batch])`: ids stay ids
            elif qual in makers and id(current) in converted:
                built += 1
            elif qual in makers:
                if qual != "torch.LongTensor" and not any(
                        a.keyword is not None and a.keyword.value == "dtype" and owner.imports.qualify(a.value) in _ID_DTYPES
                        for a in current.args):
                    return None
                built += 1
        stack.extend(children(current))
    return tokenises, built


_PADDERS = frozenset({"torch.nn.utils.rnn.pad_sequence"})
_PAD_INDEX = re.compile(r"(idx|index|_id|token_id)$")


def _pads_id_fields(call: cst.Call) -> bool:
    """The padded sequences are a field named as ids or labels of each item (`[elem["input_ids"]
    for elem in batch]`), or the padding value is named as an index (`padding_value=pad_idx`):
    a vocabulary's padding token."""
    padding = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "padding_value"), None)
    if padding is not None and _PAD_INDEX.search((dotted_name(padding) or "").rsplit(".", 1)[-1]) is not None:
        return True
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    if type(first) is not cst.ListComp or type(first.elt) is not cst.Subscript or len(first.elt.slice) != 1:
        return False
    key = first.elt.slice[0].slice
    return (type(key) is cst.Index and type(key.value) is cst.SimpleString
            and isinstance(key.value.evaluated_value, str) and _ID_FIELD.search(key.value.evaluated_value) is not None)


# The calls that build a tensor from the values they are given (a `dtype=` says which).
_TENSOR_MAKERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.Tensor",
                            "torch.FloatTensor", "torch.from_numpy", "torch.stack", "torch.zeros", "torch.ones"})


_ID_CONVERSIONS = frozenset({"long", "int"})
_ID_DTYPES = frozenset({"torch.long", "torch.int64", "torch.int32", "torch.int"})


def _hands_out_ids(owner, info: ClassInfo) -> bool:
    """What `__getitem__` returns is converted to an integer dtype (`.long()`, `.int()`,
    `.type(torch.int64)`, `.to(torch.long)`), or `__init__` built what it holds as one
    (`torch.tensor(seq, dtype=torch.long)`)."""
    getitem = owner.facts.functions.get(f"{info.name}.__getitem__")
    init = owner.facts.functions.get(f"{info.name}.__init__")
    if getitem is None or init is None:
        return False
    return (_converts_to_ids(owner, getitem.node.body, False) or _converts_to_ids(owner, init.node.body, True)
            or _id_fields_returned(getitem))


# Fields of a tokenised example: token ids, their masks and labels.
_ID_FIELD = re.compile(r"(^|_)(ids|input_ids|token_ids|labels?|mask|idx|index)$")


def _id_fields_returned(getitem) -> bool:
    """Every tensor `__getitem__` returns is made of a field named as token ids or labels of a
    held example (`torch.tensor(self.examples[i].input_ids), torch.tensor(self.examples[i].label)`)."""
    returns = [r.value for r in getitem.return_sites if r.value is not None]
    if not returns:
        return False
    parts = [e.value for r in returns for e in (r.elements if type(r) is cst.Tuple else [cst.Element(r)])]
    return all(
        type(p) is cst.Call and dotted_name(p.func) in _WRAPPERS and len(p.args) == 1
        and type(p.args[0].value) is cst.Attribute and bool(_ID_FIELD.search(p.args[0].value.attr.value))
        for p in parts
    )


def _converts_to_ids(owner, body: cst.CSTNode, built: bool) -> bool:
    """In `__getitem__` (``built`` False): some conversion to an integer dtype. In `__init__`:
    every tensor it builds is given an integer dtype (images kept beside their labels are not
    token ids)."""
    ids = other = False
    stack = list(children(body))
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            if type(node.func) is cst.Attribute:
                method = node.func.attr.value
                if not built and method in _ID_CONVERSIONS and not node.args:
                    return True
                if not built and method in ("type", "to") and any(
                        owner.imports.qualify(a.value) in _ID_DTYPES for a in node.args):
                    return True
            if built and owner.imports.qualify(node.func) in _TENSOR_BUILDERS:
                if any(a.keyword is not None and a.keyword.value == "dtype"
                       and owner.imports.qualify(a.value) in _ID_DTYPES for a in node.args):
                    ids = True
                else:
                    other = True
        stack.extend(children(node))
    return ids and not other


class _IdTensor(Question[str]):
    """"yes": a tensor built with an integer dtype (`torch.tensor(rows, dtype=torch.long)`,
    `torch.LongTensor(rows)`, `x.long()`); "no" otherwise."""

    key = "id-tensor"
    unknown = "no"

    def terminal(self, flow, expr, ctx: Context, order: int) -> Optional[str]:
        if type(expr) is not cst.Call:
            return None
        qualified = flow.model.imports.qualify(expr.func)
        if qualified in ("torch.tensor", "torch.as_tensor"):
            dtype = argument(expr, "dtype", None)
            return "yes" if dtype is not None and flow.model.imports.qualify(dtype.value) in _ID_DTYPES else "no"
        if qualified in _ID_TENSOR_TYPES:
            return "yes"
        if type(expr.func) is cst.Attribute and expr.func.attr.value in _ID_CONVERSIONS and not expr.args:
            return "yes"
        return None

    def combine(self, answers) -> str:
        return "yes" if answers and all(a == "yes" for a in answers) else "no"


class _IdTable(Question[str]):
    """"yes": a `TensorDataset` whose first tensor (the inputs) holds integer ids."""

    key = "id-table"
    unknown = "no"

    def terminal(self, flow, expr, ctx: Context, order: int) -> Optional[str]:
        if type(expr) is not cst.Call:
            return None
        if flow.model.imports.qualify(expr.func) != "torch.utils.data.TensorDataset":
            return None
        first = argument(expr, "", 0)
        if first is None:  # `TensorDataset(*tensors)`
            return "no"
        return flow.ask(_ID_TENSOR, first.value, ctx, order)

    def combine(self, answers) -> str:
        return "yes" if answers and all(a == "yes" for a in answers) else "no"


class _TokenisedLibraryTable(Question[str]):
    """"yes": a dataset class of Hugging Face `transformers` that tokenises its whole corpus
    when built and keeps the features in a list (`GlueDataset(args, tokenizer=tokenizer)`)."""

    key = "tokenised-library-table"
    unknown = "no"

    def terminal(self, flow, expr, ctx: Context, order: int) -> Optional[str]:
        if type(expr) is cst.Subscript:
            # `dev_datasets[name]` of a dict of such tables: every value the dict may hold
            values, complete = every_value(flow.ask(DICT_CONTENTS, expr.value, ctx, order))
            if not complete or not values:
                return "no"
            return self.combine([v.flow.ask(self, v.expr, v.ctx, v.order) for v in values])
        if type(expr) is not cst.Call:
            return None
        qualified = flow.model.imports.qualify(expr.func) or ""
        if qualified.startswith("transformers.") and qualified.rsplit(".", 1)[-1] in _TOKENISED_TABLES:
            return "yes"
        return None

    def combine(self, answers) -> str:
        return "yes" if answers and all(a == "yes" for a in answers) else "no"


# `transformers`' legacy datasets, which tokenise the corpus in `__init__` (or read the cached
# features back) and whose `__getitem__` returns `self.features[i]`.
_TOKENISED_TABLES = frozenset({
    "GlueDataset", "SquadDataset", "TextDataset", "LineByLineTextDataset", "LineByLineWithRefDataset",
    "LineByLineWithSOPTextDataset", "TextDatasetForNextSentencePrediction",
})
_TOKENISED_LIBRARY_TABLE = _TokenisedLibraryTable()


def tokenised_library_table(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is one of `transformers`' legacy datasets that hold a corpus
    tokenised when they were built (`GlueDataset`, `LineByLineTextDataset`): rows of token ids
    read from a list."""
    return model.values.ask(_TOKENISED_LIBRARY_TABLE, expr, ctx, order) == "yes"


_ID_TENSOR_TYPES = frozenset({"torch.LongTensor", "torch.IntTensor", "torch.cuda.LongTensor"})
_ID_TENSOR = _IdTensor()
_ID_TABLE = _IdTable()


def holds_id_tensors(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is a `TensorDataset` of integer ids (the token ids, masks and
    labels of a tokenised corpus, `TensorDataset(torch.tensor([f.input_ids for f in features],
    dtype=torch.long), ...)`), or one of `transformers`' datasets tokenised when built: a batch
    is a few kilobytes. An image set kept as `uint8` is not."""
    return model.values.ask(_ID_TABLE, expr, ctx, order) == "yes" or tokenised_library_table(model, expr, ctx, order)


_TENSOR_BUILDERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.Tensor", "torch.stack",
                              "torch.cat", "torch.zeros", "torch.ones", "torch.randn", "torch.rand"})


def _class_in_memory(owner, info: ClassInfo) -> bool:
    getitem = owner.facts.functions.get(f"{info.name}.__getitem__")
    init = owner.facts.functions.get(f"{info.name}.__init__")
    if getitem is None or init is None or len(getitem.params) < 2:
        return False
    held = _attributes_built(owner, init.node) | _attributes_handed_in(owner, init, lenient=_plain_reader(owner, info))
    return _reads_held(owner, info, getitem, held, 0)


def _plain_reader(owner, info: ClassInfo) -> bool:
    """The class does nothing but hold and hand out samples: `__init__`, `__len__`,
    `__getitem__` and methods `__getitem__` calls. One with more (a `collate_fn` that tokenises
    each batch) does its work elsewhere, in the process that loads."""
    prefix = info.name + "."
    called = {site.method for site in owner.facts.functions[prefix + "__getitem__"].sites
              if site.receiver_name == "self" and site.method}
    return all(key[len(prefix):] in ("__init__", "__len__", "__getitem__") or key[len(prefix):] in called
               for key in owner.facts.functions if key.startswith(prefix) and "." not in key[len(prefix):])


def _reads_held(owner, info: ClassInfo, function, held: Set[str], depth: int) -> bool:
    """The method's body only indexes what the object holds (``held``), with a few cheap
    steps on what it indexed (`ex -= torch.mean(ex)`, `(x - self.mean) / self.std`) or a call
    of another such method of the class (`ex = self.pullitem(index)`), and returns it."""
    bound: Set[str] = set(function.params[1:])
    indexes = set(bound)
    returned = False
    for index, statement in enumerate(function.node.body.body):
        if not type(statement) is cst.SimpleStatementLine or len(statement.body) != 1:
            return False
        small = statement.body[0]
        if index == 0 and type(small) is cst.Expr and type(small.value) is cst.SimpleString:
            continue  # the docstring
        if type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) in (cst.Name, cst.Tuple):
            value = small.value
            if not (_indexes(value, held, bound - indexes) or _random_index(owner, value) or _cheap(value, bound)
                    or _held_helper(owner, info, value, held, depth)):
                return False
            targets = small.targets[0].target
            names = [targets] if type(targets) is cst.Name else [e.value for e in targets.elements]
            if not all(type(n) is cst.Name for n in names):
                return False
            bound.update(n.value for n in names)
        elif type(small) is cst.AugAssign and type(small.target) is cst.Name and small.target.value in bound:
            if not _cheap(small.value, bound):
                return False  # `ex -= torch.mean(ex)`: normalising the indexed row in place
        elif type(small) is cst.Return and small.value is not None:
            if not (_indexes(small.value, held, bound - indexes) or _cheap(small.value, bound - indexes)):
                return False
            returned = True
        else:
            return False
    return returned


# Reductions and elementwise steps that cost little on one indexed sample.
_CHEAP_TORCH = frozenset({"torch.mean", "torch.std", "torch.sum", "torch.max", "torch.min", "torch.abs", "torch.sqrt",
                          "torch.clamp", "torch.log", "torch.exp"})


def _cheap(expr: cst.BaseExpression, bound: Set[str]) -> bool:
    """Arithmetic on names the method bound, numbers and plain attributes of the object
    (`(x - self.mean) / self.std`), through a few cheap torch reductions; a tuple of such."""
    kind = type(expr)
    if kind is cst.Name:
        return expr.value in bound
    if kind in (cst.Integer, cst.Float):
        return True
    if kind is cst.Attribute:
        return _self_attribute(expr) is not None
    if kind is cst.BinaryOperation:
        return _cheap(expr.left, bound) and _cheap(expr.right, bound)
    if kind is cst.UnaryOperation:
        return _cheap(expr.expression, bound)
    if kind is cst.Tuple:
        return bool(expr.elements) and all(_cheap(e.value, bound) for e in expr.elements)
    if kind is cst.Call and dotted_name(expr.func) in _CHEAP_TORCH:
        return all(a.keyword is not None or _cheap(a.value, bound) for a in expr.args if not a.star)
    return False


def _held_helper(owner, info: ClassInfo, value: cst.BaseExpression, held: Set[str], depth: int) -> bool:
    """`self.pullitem(index)`: a method of the class that itself only reads what it holds."""
    if depth > 1 or type(value) is not cst.Call or type(value.func) is not cst.Attribute:
        return False
    if dotted_name(value.func.value) != "self":
        return False
    helper = owner.facts.functions.get(f"{info.name}.{value.func.attr.value}")
    return helper is not None and _reads_held(owner, info, helper, held, depth + 1)


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


def _attributes_handed_in(owner, init, lenient: bool = False) -> Set[str]:
    """`self.data = data` where every construction of the class passes, for that parameter, a
    value built in memory (`TextSampler(torch.from_numpy(x), 1024)`, a name bound to one), or
    where the parameter is annotated as a list or a tensor (`data: list`). ``lenient`` (a
    dataset whose `__getitem__` only indexes what it holds): also where the class is built and
    no construction passes a value read lazily from storage (`h5py`, a memory map): data handed
    to such a dataset is almost always arrays or tensors a loading step made."""
    out: Set[str] = set()
    params = {p.name.value: p for p in init.node.params.params}
    names = list(params)
    for statement in init.node.body.body:
        if not type(statement) is cst.SimpleStatementLine or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if not type(small) is cst.Assign or len(small.targets) != 1 or not type(small.value) is cst.Name:
            continue
        attribute = _self_attribute(small.targets[0].target)
        param = params.get(small.value.value)
        if attribute is None or param is None or names.index(param.name.value) == 0:
            continue
        position = names.index(param.name.value) - 1
        if _annotated_in_memory(param) or _always_given_in_memory(owner, init, position, param.name.value) or (
                lenient and _never_given_lazily(owner, init, position, param.name.value)):
            out.add(attribute)
    return out


# What a value read from storage on each access is built with.
_LAZY = re.compile(r"\bh5py\b|\bzarr\b|\blmdb\b|memmap|mmap_mode|\bopen\(|\.File\(")


def _never_given_lazily(owner, init, position: int, name: str) -> bool:
    """Some construction of the class is seen, and none passes, for the parameter, a value
    built (directly or through the bindings of the name passed) with a storage reader."""
    built = owner.calls.constructions(init)
    if not built:
        return False
    for model, site in built:
        arg = argument(site.node, name, position)
        if arg is None or arg.star:
            return False
        texts = [model.code(arg.value)]
        base = arg.value
        while type(base) in (cst.Subscript, cst.Attribute):
            base = base.value  # `store["x"]` of `store = h5py.File(...)`
        if type(base) is cst.Name:
            reach = model.bindings.reaching(base.value, site.ctx, site.order)
            texts += [model.code(a.value) for a in reach.assignments if a.value is not None]
        if any(_LAZY.search(text) for text in texts):
            return False
    return True


_IN_MEMORY_ANNOTATIONS = frozenset({"list", "List", "tuple", "Tuple", "torch.Tensor", "Tensor", "np.ndarray"})


def _annotated_in_memory(param: cst.Param) -> bool:
    annotation = param.annotation.annotation if param.annotation is not None else None
    if type(annotation) is cst.Subscript:
        annotation = annotation.value
    return annotation is not None and dotted_name(annotation) in _IN_MEMORY_ANNOTATIONS


def _always_given_in_memory(owner, init, position: int, name: str) -> bool:
    built = owner.calls.constructions(init)
    if not built:
        return False
    for model, site in built:
        arg = argument(site.node, name, position)
        if arg is None or not _value_in_memory(model, arg.value, site.ctx, site.order):
            return False
    return True


def _value_in_memory(model, value: cst.BaseExpression, ctx: Context, order: float) -> bool:
    if _built_in_memory(model, value) or model.is_tensor(value, ctx):
        return True
    if type(value) is not cst.Name:
        return False
    reach = model.bindings.reaching(value.value, ctx, order)
    return (
        reach.closed and reach.parameter is None and bool(reach.assignments)
        and all(_bound_in_memory(model, a) for a in reach.assignments)
    )


def _bound_in_memory(model, assignment) -> bool:
    value = assignment.value
    if value is not None and assignment.index is not None:
        # `train, val = torch.from_numpy(a), torch.from_numpy(b)`
        elements = value.elements if type(value) in (cst.Tuple, cst.List) else ()
        value = elements[assignment.index].value if assignment.index < len(elements) else None
    if value is None:
        return False
    # A tensor the value model knows (`x_train = x_train.unsqueeze(-1)` of one made from NumPy)
    # is held in memory, wherever it was made.
    return _built_in_memory(model, value) or (assignment.index is None and model.is_tensor(value, assignment.ctx))


# Drawing a random position is cheap: `start = torch.randint(0, n - seq_len, (1,))`.
_RANDOM_INDEX = frozenset({"torch.randint", "random.randint", "random.randrange", "numpy.random.randint"})


def _random_index(owner, value: cst.BaseExpression) -> bool:
    return type(value) is cst.Call and owner.imports.qualify(value.func) in _RANDOM_INDEX


def _built_in_memory(owner, value: cst.BaseExpression) -> bool:
    if isinstance(value, _IN_MEMORY_VALUES):
        return True
    if type(value) is cst.Call:
        qualname = owner.imports.qualify(value.func) or ""
        if (not value.args and type(value.func) is cst.Name and value.func.value in ("list", "dict")
                and not qualname):
            return True  # `self.data = list()`, filled with `append` below: as `[]`
        if type(value.func) is cst.Attribute and value.func.attr.value == "map" and not qualname and (
                dotted_name(value.func.value) or "").rsplit(".", 1)[-1] in ("pool", "p", "executor"):
            # `self.examples = pool.map(convert, data)`: a multiprocessing pool's list of results
            return True
        if (type(value.func) is cst.Name and value.func.value in ("list", "tuple") and not qualname
                and len(value.args) == 1 and _built_in_memory(owner, value.args[0].value)):
            return True  # `list(executor.map(convert, data))`
        return qualname.startswith("torch.") and not qualname.startswith("torch.utils.")
    return False


def _self_attribute(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":
        return expr.attr.value
    return None


# Conversions of an indexed tensor that copy at most a few bytes per element: `.long()`,
# `.type(torch.int64)`.
_CONVERSIONS = frozenset({"long", "int", "float", "half", "bool", "type", "clone", "contiguous"})
# Tensors made of what an index gives, as written (`torch.tensor(example.input_ids)`).
_WRAPPERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.Tensor"})


def _indexes(expr: cst.BaseExpression, held: Set[str], bound: Set[str]) -> bool:
    """The expression only indexes attributes held in memory (or names bound to such an index),
    converts what it indexed at most, and calls nothing else."""
    if (
        type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _CONVERSIONS
        and not _calls(a.value for a in expr.args)
    ):
        return _indexes(expr.func.value, held, bound)
    if type(expr) is cst.Tuple:
        return bool(expr.elements) and all(_indexes(e.value, held, bound) for e in expr.elements)
    if (type(expr) is cst.Call and dotted_name(expr.func) in _WRAPPERS and len(expr.args) == 1
            and expr.args[0].keyword is None and not expr.args[0].star):
        # `torch.tensor(self.examples[item].input_ids)`: a held list of numbers made a tensor
        return _indexes(expr.args[0].value, held, bound)
    if type(expr) is cst.Attribute and type(expr.value) is cst.Subscript:
        return _indexes(expr.value, held, bound)  # a field of a held example
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("tuple", "list") and len(expr.args) == 1:
        return _indexes_each(expr.args[0].value, held)
    if type(expr) in (cst.ListComp, cst.GeneratorExp):
        return _indexes_each(expr, held)
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


def _indexes_each(expr: cst.BaseExpression, held: Set[str]) -> bool:
    """`tuple(tensor[index] for tensor in self.tensors)`, as `TensorDataset` itself does: the
    same index into each tensor of a list held in memory."""
    if type(expr) not in (cst.ListComp, cst.GeneratorExp):
        return False
    loop = expr.for_in
    if loop.inner_for_in is not None or loop.ifs or type(loop.target) is not cst.Name or _self_attribute(loop.iter) not in held:
        return False
    element = expr.elt
    if type(element) is cst.Call and type(element.func) is cst.Attribute and element.func.attr.value in _CONVERSIONS:
        if _calls(a.value for a in element.args):
            return False
        element = element.func.value
    return (type(element) is cst.Subscript and type(element.value) is cst.Name
            and element.value.value == loop.target.value and not _calls(element.slice))


def _calls(nodes) -> bool:
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            return True
        stack.extend(children(node))
    return False


# Hugging Face `datasets` tables prepared ahead of training: `load_dataset(...)` (or a table
# read back from disk), then `.map(tokenize, batched=True)` and the like. A row is read from an
# Arrow table as ready values; what is left per batch is the collate step (padding).
_HF_LOADS = frozenset({
    "datasets.load_dataset", "datasets.load_from_disk", "datasets.DatasetDict", "datasets.concatenate_datasets",
    "datasets.Dataset.from_dict", "datasets.Dataset.from_list", "datasets.Dataset.from_pandas",
    "datasets.Dataset.from_generator", "datasets.Dataset.from_json", "datasets.Dataset.from_csv",
})
_HF_STEPS = frozenset({
    "map", "filter", "select", "shuffle", "remove_columns", "rename_column", "rename_columns", "with_format",
    "train_test_split", "flatten", "sort", "select_columns", "take", "skip",
})
# Ways to run code on every row as it is read: then loading a sample is not cheap.
_ON_THE_FLY = ("with_transform", "set_transform", "to_iterable_dataset")


class _Prepared(Question[str]):
    """"mapped": an HF table at least one `.map(...)` went over; "raw": one read as loaded."""

    key = "hf-prepared"
    unknown = "no"

    def terminal(self, flow, expr, ctx: Context, order: int) -> Optional[str]:
        if type(expr) is cst.Subscript:
            return flow.ask(self, expr.value, ctx, order)  # `tokenized["train"]`
        if type(expr) is not cst.Call:
            return None
        if flow.model.imports.qualify(expr.func) in _HF_LOADS:
            return "raw"
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value in _HF_STEPS:
            before = flow.ask(self, func.value, ctx, order)
            if before == "no":
                return "no"
            return "mapped" if func.attr.value == "map" else before
        if type(func) is cst.Attribute and func.attr.value in _TOKENIZING and tokens_only_transform(flow.model, expr):
            # `.with_transform(preprocess_train)` that tokenises a short caption per row: the row
            # is token ids, as after a `.map(tokenize)`.
            return "mapped" if flow.ask(self, func.value, ctx, order) != "no" else "no"
        return None

    def element(self, flow, expr, index: int, ctx: Context, order: int) -> Optional[str]:
        """`train_ds, valid_ds = load_dataset(name, split=["train", "test"])`: each part is a
        table of the same kind as the whole."""
        if type(expr) is cst.Call and flow.model.imports.qualify(expr.func) in _HF_LOADS:
            return "raw"
        return None

    def combine(self, answers) -> str:
        if not answers or any(a == "no" for a in answers):
            return "no"
        return "mapped" if all(a == "mapped" for a in answers) else "raw"


_PREPARED = _Prepared()


def prepared_hf_table(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is a Hugging Face `datasets` table that a `.map(...)` prepared
    (`load_dataset(...).map(tokenize, batched=True)["train"]`), or a table of token ids the
    file formats as tensors in place (`train_dataset.set_format(type="pt")` in a file that
    tokenises: a table a helper of the project cached), in a file that sets no per-row
    transform on a table."""
    if any(not (method in _TOKENIZING and tokens_only_transform(model, site.node))
           for method in _ON_THE_FLY for site in model.method_calls(method)):
        return False
    return model.values.ask(_PREPARED, expr, ctx, order) == "mapped" or _formatted_tokens(model, expr)


# Per-row transforms that may do no more than tokenise.
_TOKENIZING = ("with_transform", "set_transform")
# What a row transform that reads more than text does: decodes images, audio or video.
_MEDIA = re.compile(r"image|pixel|audio|wave|video|frame|\.convert\(|transforms|\.open\(|load", re.IGNORECASE)


def tokens_only_transform(model, call: cst.Call) -> bool:
    """The transform a `.with_transform(fn)` / `.set_transform(fn)` gives is a function of the
    file that calls a tokenizer and, with the functions of the file it calls by name, reads no
    image, audio or video (`preprocess_train` that tokenises the captions of a prompt table).
    Worked out once per call: every loader of the file asks about every such transform."""
    known = model.shared("tokens-only-transforms", lambda m: {})
    if id(call) not in known:
        known[id(call)] = _tokens_only(model, call)
    return known[id(call)]


def _tokens_only(model, call: cst.Call) -> bool:
    if len(call.args) != 1 or type(call.args[0].value) is not cst.Name:
        return False
    name = call.args[0].value.value
    found = [info for info in model.facts.functions.values() if info.node.name.value == name]
    if len(found) != 1:
        return False
    code = model.code(found[0].node)
    called = set(re.findall(r"\b([A-Za-z_]\w*)\(", code))
    for info in model.facts.functions.values():
        if info is not found[0] and info.node.name.value in called and info.class_name is None:
            code += model.code(info.node)
    code = re.sub(r"#[^\n]*", "", code)  # comments above a def say what it was meant to do, not what it does
    return "tokeniz" in code.lower() and not _MEDIA.search(code)


_TENSOR_FORMATS = frozenset({"pt", "torch", "numpy", "np"})
_TOKENIZER_TEXT = ("tokenizer", "Tokenizer")


def _formatted_tokens(model, expr: cst.BaseExpression) -> bool:
    """`name.set_format(type="pt")` (or `"torch"`) on the name the loader reads, in a file
    that names a tokenizer: rows of token ids read straight from the table."""
    name = dotted_name(expr)
    if name is None:
        return False
    for site in model.method_calls("set_format"):
        if site.receiver_name != name or not _names_tokenizer(model):
            continue
        kind = argument(site.node, "type", 0)
        if kind is not None and type(kind.value) is cst.SimpleString and kind.value.evaluated_value in _TENSOR_FORMATS:
            return True
    return False


def _names_tokenizer(model) -> bool:
    # Once per file: each loader of a large file asks, and the text is searched whole.
    return model.shared("names-tokenizer", lambda m: any(word in (m.text or "") for word in _TOKENIZER_TEXT))


# Graph libraries whose batching makes an object of their own. DataLoader pinning reaches only
# tensors and objects with a `pin_memory()` method, and DGL's graphs have none (`pin_memory_()`
# works in place, by hand): the graph's own copy to the GPU gains nothing from `pin_memory=True`.
_GRAPH_BATCHES = frozenset({"dgl.batch", "dgl.batch_hetero"})


def _collate_functions(model, call: cst.Call) -> list:
    """(model, FunctionInfo) of the loader's `collate_fn`: a project function, or, for
    `dataset.collate`, every project method of that name."""
    arg = argument(call, "collate_fn", None)
    if arg is None:
        return []
    value = arg.value
    # `collate_fn=utils.collate_fn` of `import util.misc as utils`: a module's function
    found = _function_named(model, value)
    if found:
        return found
    if type(value) is cst.Attribute:
        return project_methods_named(model, value.attr.value)
    return []


def _partial_collates(model, call: cst.Call, ctx: Context, order: int) -> list:
    """The `functools.partial(fn, device=device, ...)` calls a loader's `collate_fn` is, given
    in place or through the bindings of a name (`collate = partial(...)` on each branch); empty
    when any of them is something else."""
    arg = argument(call, "collate_fn", None)
    if arg is None:
        return []
    values = [arg.value]
    if type(arg.value) is cst.Name and arg.value.value not in model.facts.functions:
        reach = model.bindings.reaching(arg.value.value, ctx, order)
        if not reach.closed or reach.parameter is not None or not reach.assignments:
            return []
        values = [a.value for a in reach.assignments]
    partials = [v for v in values if type(v) is cst.Call and model.imports.qualify(v.func) == "functools.partial"
                and v.args and v.args[0].keyword is None and not v.args[0].star]
    return partials if len(partials) == len(values) else []


def collates_onto_device(model, call: cst.Call, ctx: Context, order: int) -> bool:
    """The loader's `collate_fn` moves the batch it makes to the GPU (`.to(device)` in a
    function handed in as `partial(collate, device=device)`, or `.cuda()`) on every path: the
    loader yields device tensors, which pinning cannot take and worker processes cannot make."""
    functions = _collate_functions(model, call)
    if functions:
        # `collate_fn=dataset.collate_fn` may be any project method of that name: all must move.
        return all(_moves_batch(model, owner, info, {}, ctx, order) for owner, info in functions)
    partials = _partial_collates(model, call, ctx, order)
    return bool(partials) and all(
        any(_moves_batch(model, owner, info, {a.keyword.value: a.value for a in p.args[1:] if a.keyword is not None},
                         ctx, order) for owner, info in _function_named(model, p.args[0].value))
        for p in partials
    )


def items_on_device(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is an instance of a project class whose `__getitem__` makes a
    move to the GPU (`torch.tensor(ids).to(device)`): a loader over it yields device tensors,
    which pinning cannot take. Any such move counts, not only of what is returned: this only
    lowers a finding to information, so it errs towards saying less."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    if not known or not found:
        return False
    for owner, info in found:
        getitem = class_method(owner, info, "__getitem__")
        if getitem is None or not _moves_batch(model, getitem[0], getitem[1], {}, ctx, order):
            return False
    return True


# Opening a side CUDA stream: a class that copies its batches to the GPU there, overlapped with
# the step (a prefetching dataset wrapper with its own thread and pinned buffers).
_SIDE_STREAMS = ("torch.cuda.Stream", "torch.cuda.stream")


def prefetches_to_device(model, expr: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """Every path of the value is an instance of a project class one of whose methods opens a
    side CUDA stream: the dataset prefetches its batches to the GPU itself, so a loader over it
    hands on device tensors, which pinning cannot take and worker processes could not make."""
    found, known = model.values.ask(INSTANCES, expr, ctx, order)
    if not known or not found:
        return False
    return all(
        any(site.ctx.class_scope == info.scope for q in _SIDE_STREAMS for site in owner.calls_to(q))
        for owner, info in found
    )


def _moves_batch(model, owner, info, given: dict, ctx: Context, order: int) -> bool:
    """The function moves something to a device: `.cuda()`, `.to(dev)` to a place not the host,
    or `.to(device)` of a parameter that the partial gives a device not the host."""
    defaults = {p.name.value: p.default for p in (*info.node.params.params, *info.node.params.kwonly_params)}
    for site in info.sites:
        if site.method not in ("cuda", "to"):
            continue
        target = argument(site.node, "device", 0)
        name = target.value.value if target is not None and type(target.value) is cst.Name else None
        if given and name in defaults:
            # What the partial gives, else the parameter's default: no other call passes it.
            if name in given:
                if device_kind(model, given[name], ctx, order) != HOST:
                    return True
            elif defaults[name] is not None and device_kind(owner, defaults[name], site.ctx, site.order) != HOST:
                return True
        elif moves_to_device(owner, site.node, site.ctx, site.order):
            return True
    return False


def _function_named(model, value: cst.BaseExpression) -> list:
    """(model, FunctionInfo) of a function named in place: one of the file, or one imported."""
    if type(value) is cst.Name:
        info = model.facts.functions.get(value.value)
        if info is not None:
            return [(model, info)]
    if type(value) in (cst.Name, cst.Attribute):
        qual = model.imports.qualify(value)
        symbol = model.symbol(qual) if qual is not None else None
        if symbol is not None and symbol.kind == "function":
            return [(symbol.model, symbol.info)]
    return []


def _packing_functions(model, call: cst.Call, ctx: Context, order: int) -> list:
    """(model, FunctionInfo) of the loader's `collate_fn`, also when it is a `partial` of one
    (`collate_fn=partial(utils.collate_fn, False)`, in place or through a name): what the batch
    is packed into does not depend on the arguments bound."""
    found = _collate_functions(model, call)
    if found:
        return found
    found = [hit for p in _partial_collates(model, call, ctx, order) for hit in _function_named(model, p.args[0].value)]
    if found:
        return found
    # `collate_fn=train_collator`, an instance of a project class: its `__call__` packs the batch.
    arg = argument(call, "collate_fn", None)
    if arg is None:
        return []
    called = []
    for owner, cls in instances_of(model, arg.value, ctx, order):
        target = class_method(owner, cls, "__call__")
        if target is not None:
            called.append(target)
    return called


def collates_graphs(model, call: cst.Call, ctx: Context, order: int) -> bool:
    """The loader's `collate_fn` batches samples into a graph library's object (`dgl.batch`)."""
    functions = _packing_functions(model, call, ctx, order)
    return bool(functions) and all(
        any(site.qualname in _GRAPH_BATCHES for site in info.sites) for _, info in functions
    )


def unpinnable_batch_class(model, call: cst.Call, ctx: Context, order: int) -> Optional[str]:
    """The name of a project class the loader's `collate_fn` packs the batch into (DETR's
    `nested_tensor_from_tensor_list(...)` returning a `NestedTensor`) when that class has no
    `pin_memory()` method: the loader's pinning passes such objects through untouched."""
    for owner, info in _packing_functions(model, call, ctx, order):
        for site in info.sites:
            for cls_owner, cls in instances_of(owner, site.node, site.ctx, site.order):
                if _unpinnable(cls_owner, cls):
                    return cls.name
    built = _collate_class(model, call)
    if built is not None and _unpinnable(*built):
        return built[1].name  # `collate_fn=GraphBatch`: the class builds the batch itself
    return None


def _unpinnable(owner, cls) -> bool:
    return (owner.facts.classes.get(cls.name) is cls and class_method(owner, cls, "pin_memory") is None
            and not any(b.startswith("torch.") or b in _PINNED_BASES for b in cls.bases))


def _collate_class(model, call: cst.Call):
    """(model, ClassInfo) when the loader's `collate_fn` is a project class itself."""
    arg = argument(call, "collate_fn", None)
    if arg is None:
        return None
    name = dotted_name(arg.value)
    if name is None:
        return None
    local = model.facts.classes.get(name)
    if local is not None:
        return model, local
    qual = model.imports.qualify(arg.value)
    symbol = model.symbol(qual) if qual is not None else None
    if symbol is not None and symbol.kind == "class":
        return symbol.model, symbol.info
    return None


# Bases whose instances the loader's pinning walks into (it pins tensors inside mappings,
# sequences and named tuples).
_PINNED_BASES = frozenset({"dict", "list", "tuple", "NamedTuple", "OrderedDict", "collections.OrderedDict",
                           "typing.NamedTuple", "collections.namedtuple"})


def passes_host_arrays(model, call: cst.Call, ctx: Context, order: int) -> bool:
    """The loader hands its samples on as they are (`collate_fn=no_collate` returning its
    argument, or `lambda x: x`) and the dataset's `__getitem__` builds no tensor: it returns
    NumPy arrays, images and strings (`np.array(Image.open(path))`, the path). Pinning walks
    the batch for tensors and finds none."""
    arg = argument(call, "collate_fn", None)
    if arg is None or not _passes_through(model, arg.value, call, ctx, order):
        return False
    dataset = argument(call, "dataset", 0)
    if dataset is None:
        return False
    found = instances_of(model, dataset.value, ctx, order)
    if not found:
        return False
    for owner, cls in found:
        getitem = class_method(owner, cls, "__getitem__")
        if getitem is None or not getitem[1].sites or not all(_host_only(s) for s in getitem[1].sites):
            return False
    return True


def collates_to_arrays(model, call: cst.Call, ctx: Context, order: int) -> bool:
    """The loader's `collate_fn` is a project function that packs the batch with NumPy alone
    (`ret[key] = np.concatenate(elems)` for each key of a dict of samples, the layout of
    point-cloud detectors) and calls nothing else but builtins and the methods of dicts and
    lists: the batch holds arrays, which pinning passes by; the training code copies them to the
    GPU itself."""
    functions = _collate_functions(model, call)
    arg = argument(call, "collate_fn", None)
    if not functions and arg is not None and type(arg.value) is cst.Name:
        # `collate_fn = merge_batch_multigpu if multi_gpu else ...` on each branch, then
        # `collate_fn=collate_fn`: every function a binding that reaches the call gives it.
        reach = model.bindings.reaching(arg.value.value, ctx, order)
        if reach.closed and reach.parameter is None and reach.assignments:
            for assignment in reach.assignments:
                found = _function_named(model, assignment.value) if assignment.value is not None else []
                if not found:
                    return False
                functions.extend(found)
    return bool(functions) and all(_packs_arrays(info) for _, info in functions)


_CONTAINER_METHODS = frozenset({"append", "extend", "items", "keys", "values", "get", "setdefault", "pop", "update"})


def _packs_arrays(info) -> bool:
    if not info.sites:
        return False
    numpy = False
    for site in info.sites:
        qual = site.qualname
        if qual is not None and qual.startswith("numpy."):
            numpy = True
        elif qual is not None and qual.startswith("collections."):
            continue  # `defaultdict(list)` to gather each key's samples
        elif not (_host_only(site) or site.method in _CONTAINER_METHODS):
            return False
    return numpy


def _passes_through(model, value: cst.BaseExpression, call: cst.Call, ctx: Context, order: int) -> bool:
    if type(value) is cst.Lambda:
        params = value.params.params
        return len(params) == 1 and dotted_name(value.body) == params[0].name.value
    functions = _collate_functions(model, call)
    return bool(functions) and all(_returns_its_argument(info.node) for _, info in functions)


def _returns_its_argument(node: cst.FunctionDef) -> bool:
    params = node.params.params
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    statements = [s for s in body if not (type(s) is cst.SimpleStatementLine and type(s.body[0]) is cst.Expr
                                          and type(s.body[0].value) is cst.SimpleString)]
    if len(params) != 1 or len(statements) != 1 or type(statements[0]) is not cst.SimpleStatementLine:
        return False
    small = statements[0].body[0]
    return type(small) is cst.Return and small.value is not None and dotted_name(small.value) == params[0].name.value


# What a sample built only on the host, without torch, calls.
_HOST_LIBRARIES = ("numpy.", "PIL.", "os.", "cv2.", "json.", "imageio.", "random.", "math.")
_HOST_BUILTINS = frozenset({"len", "int", "float", "str", "open", "sorted", "list", "dict", "tuple", "range", "min", "max",
                            "enumerate", "zip", "isinstance"})


def _host_only(site) -> bool:
    qual = site.qualname
    if qual is not None:
        return qual.startswith(_HOST_LIBRARIES)
    if site.method is None:
        return dotted_name(site.node.func) in _HOST_BUILTINS
    return site.method in ("convert", "resize", "copy", "astype", "join", "split", "format", "crop", "transpose")


# The split masks a graph dataset's item carries: boolean node masks (torch_geometric's
# `Planetoid`, `Amazon`, ... and the `Data` objects they hand out).
_SPLIT_MASKS = frozenset({"train_mask", "val_mask", "test_mask"})


def graph_split_mask(model, expr: cst.BaseExpression, ctx, order: float) -> bool:
    """`data.train_mask` where `data = dataset[0]` (also moved, `data.to(device)`) of a
    `torch_geometric.datasets` dataset: a boolean mask over the graph's nodes."""
    if type(expr) is not cst.Attribute or expr.attr.value not in _SPLIT_MASKS:
        return False
    return _graph_item(model, expr.value, ctx, order, 0)


def _graph_item(model, expr: cst.BaseExpression, ctx, order: float, depth: int) -> bool:
    if depth > 3:
        return False
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in ("to", "cuda"):
        return _graph_item(model, expr.func.value, ctx, order, depth + 1)
    if type(expr) is cst.Subscript:
        return _graph_dataset(model, expr.value, ctx, order)
    if type(expr) is not cst.Name:
        return False
    found = model.reaching(expr.value, ctx, order)
    return bool(found) and all(bound_element(a) is not None and _graph_item(model, bound_element(a), a.ctx, a.order, depth + 1)
                               for a in found)


def _graph_dataset(model, expr: cst.BaseExpression, ctx, order: float) -> bool:
    if type(expr) is cst.Call:
        return (model.imports.qualify(expr.func) or "").startswith("torch_geometric.datasets.")
    if type(expr) is not cst.Name:
        return False
    found = model.reaching(expr.value, ctx, order)
    return bool(found) and all(a.index is None and type(a.value) is cst.Call and _graph_dataset(model, a.value, a.ctx, a.order)
                               for a in found)
