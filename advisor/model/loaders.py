"""Which `DataLoader(...)` calls of the project a value may hold or hand on: through names, helper
returns and parameters, iteration wrappers (`enumerate(tqdm(loader))`, `iter(loader)`,
`itertools.cycle(loader)`, both loaders of a `zip`), generators of the project that iterate a
loader and yield its batches (`def sample_data(loader): while True: yield from loader`; read
with the arguments of the call at hand), and
wrapper classes of the file (`Prefetcher(loader)`: all the loaders it can hand on when its
`__iter__` goes over the one it holds each time). A call of a class picked at run time among
`DataLoader` and project subclasses that take its arguments unchanged (`loader = DataLoader if
weighted else InfiniteDataLoader; loader(ds, ...)`) is a loader site too, and so is a call of a
library's loader factory (`idist.auto_dataloader(ds, num_workers=8)`, see ``LOADER_FACTORIES``):
the DataLoader it returns is built from its keyword arguments, with what the factory adds.

An answer is the loader sites found and whether they are all it can be: a path nobody can see
(`accelerator.prepare(...)`, an argument from elsewhere, a wrapper class) makes it not
exhaustive.

Batches are the items drawn from such a value: the targets of a `for` loop over it, and the
values bound from `next(it)` where `it` draws from a loader (`x, y = next(it)`), with the names
derived from them in the same loop.
"""

from __future__ import annotations

import itertools

from typing import Collection, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from advisor.model.constants import tag
from advisor.model.containers import contents_of, every_value, list_elements, lookup
from advisor.model.drawing_wrappers import hands_on_draws
from advisor.model.broken_calls import stops_at_start
from advisor.model.facts import Assignment, CallSite, Context, FunctionInfo, LoopInfo, ReturnSite
from advisor.model.framework_wrappers import wrapped_arguments
from advisor.model.kinds import BuiltBy
from advisor.model.lambdas import passed_on
from advisor.model.names import DATALOADER, dotted_name, last_segment, root_name
from advisor.model.walk import children
from advisor.model.value_flow import PRESENT, Question, ValueFlow
from advisor.model.vocabulary import ITERATION_WRAPPERS, MULTI_ITERABLE_WRAPPERS

Sites = Tuple[Tuple[CallSite, ...], bool]
_NONE: Sites = ((), False)
_NOTHING: Sites = ((), True)


class LoaderFactory:
    """A library function that builds a `DataLoader(dataset, **kwargs)` from its own arguments
    (the dataset first, every other option by keyword) and returns it, adding options of its own:
    ``pins_on_cuda``, it sets `pin_memory=True` when none is given and the run is on CUDA;
    ``distributed_sampler``, it gives the loader a `DistributedSampler` in a distributed run when
    no sampler is given (and the user then holds no sampler to call `set_epoch` on)."""

    __slots__ = ("pins_on_cuda", "distributed_sampler")

    def __init__(self, pins_on_cuda: bool, distributed_sampler: bool) -> None:
        self.pins_on_cuda = pins_on_cuda
        self.distributed_sampler = distributed_sampler


# ignite.distributed.auto_dataloader (ignite/distributed/auto.py): scales batch_size and
# num_workers by the processes, adds a DistributedSampler (or wraps the user's sampler) when the
# world is larger than one, sets `pin_memory` to whether the default device is CUDA unless given
# (forced off on XLA TPUs), and returns `DataLoader(dataset, **kwargs)`.
_AUTO_DATALOADER = LoaderFactory(pins_on_cuda=True, distributed_sampler=True)
LOADER_FACTORIES: Dict[str, LoaderFactory] = {
    "ignite.distributed.auto_dataloader": _AUTO_DATALOADER,
    "ignite.distributed.auto.auto_dataloader": _AUTO_DATALOADER,
}


def loader_calls(model) -> List[CallSite]:
    """The calls of the file that build a DataLoader: `DataLoader(...)`, loader factories, and
    project subclasses of DataLoader that take its arguments as they are (YOLOP's
    `DataLoaderX(dataset, num_workers=..., pin_memory=...)`, whose only change is a
    background `__iter__`)."""
    return model.shared("loader-calls", _loader_calls)


def dataloader_calls(model) -> List[CallSite]:
    """`loader_calls` without the library factories: the calls whose arguments are
    `DataLoader`'s own."""
    return [site for site in loader_calls(model) if loader_factory(site) is None]


def _loader_calls(model) -> List[CallSite]:
    found = model.calls_to(DATALOADER, *LOADER_FACTORIES)
    for site in model.facts.calls:
        name = dotted_name(site.node.func)
        # Named like one (`DataLoaderX`, `PrefetchLoader`), or a local name bound to such a class
        # (`loader = DataLoader if image_weights else InfiniteDataLoader`): asking every call
        # would cost more.
        if name is None or site.qualname == DATALOADER:
            continue
        if "Loader" not in name.rsplit(".", 1)[-1] and not _bound_to_loader_name(model, site):
            continue
        if site.qualname in LOADER_FACTORIES or (site.qualname or "").startswith("torch."):
            continue
        if model.values.ask(LOADER_CLASS, site.node.func, site.ctx, site.order):
            found.append(site)
    return found


def _bound_to_loader_name(model, site: CallSite) -> bool:
    """The call's callee is a plain name every binding of which names a loader class by its
    name (`loader = DataLoader if image_weights else InfiniteDataLoader`)."""
    func = site.node.func
    if type(func) is not cst.Name or func.value not in model.shared("loader-class-names", _loader_class_names):
        return False  # most calls: no binding of the name mentions a loader class at all
    reach = model.bindings.reaching(func.value, site.ctx, site.order)
    if not reach.assignments or reach.parameter is not None:
        return False
    for assignment in reach.assignments:
        value = assignment.value
        arms = (value.body, value.orelse) if type(value) is cst.IfExp else (value,)
        if not all("Loader" in (dotted_name(arm) or "").rsplit(".", 1)[-1] for arm in arms):
            return False
    return True


def _loader_class_names(model) -> frozenset:
    """The plain names some binding of the file gives a value naming a loader class (`loader =
    DataLoader if weighted else InfiniteDataLoader`): worked out once per file, so that the
    per-call check above asks the bindings only for these."""
    out = set()
    for (_, target), found in model.facts.assignments.items():
        if "." in target:
            continue
        for assignment in found:
            value = assignment.value
            arms = (value.body, value.orelse) if type(value) is cst.IfExp else (value,)
            if any("Loader" in (dotted_name(arm) or "").rsplit(".", 1)[-1] for arm in arms):
                out.add(target)
    return frozenset(out)


def iterates_itself(model, site: CallSite) -> bool:
    """The loader class the call builds, or one of the classes a name it calls may hold
    (`loader = DataLoader if weighted else InfiniteDataLoader`), is a project subclass of
    DataLoader with an `__iter__` of its own: it keeps one stream of batches open across passes
    (YOLO's `InfiniteDataLoader` over a repeating sampler), so a pass does not start its
    workers again."""
    func = site.node.func
    candidates = [func]
    if type(func) is cst.Name and func.value not in model.facts.classes:
        reach = model.bindings.reaching(func.value, site.ctx, site.order)
        if reach.assignments and reach.parameter is None:
            candidates = []
            for assignment in reach.assignments:
                value = assignment.value
                candidates.extend((value.body, value.orelse) if type(value) is cst.IfExp else (value,))
    for candidate in candidates:
        if type(candidate) is cst.Name and candidate.value in model.facts.classes:
            owner, name = model, candidate.value
        else:
            qual = model.imports.qualify(candidate) if type(candidate) in (cst.Name, cst.Attribute) else None
            symbol = model.symbol(qual) if qual is not None else None
            if symbol is None or symbol.kind != "class":
                continue
            owner, name = symbol.model, symbol.info.name
        info = owner.facts.classes.get(name)
        if info is not None and any(base in _LOADER_BASES for base in info.bases) and _keeps_stream(owner, name):
            return True
    return False


def _keeps_stream(model, class_name: str) -> bool:
    """A method of the class stores the loader's own iterator in an attribute (`self.iterator =
    super().__iter__()`), which its `__iter__` draws from: one stream for every pass. A class
    whose `__iter__` wraps a fresh `super().__iter__()` each time (a background prefetcher)
    starts its workers again like any loader."""
    if f"{class_name}.__iter__" not in model.facts.functions:
        return False
    prefix = class_name + "."
    for key, info in model.facts.functions.items():
        if not key.startswith(prefix):
            continue
        stack = [info.node]
        while stack:
            node = stack.pop()
            if (type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Attribute
                    and _super_iter(node.value)):
                return True
            stack.extend(children(node))
    return False


def _super_iter(value: cst.BaseExpression) -> bool:
    return (type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value == "__iter__"
            and type(value.func.value) is cst.Call and dotted_name(value.func.value.func) == "super")


def loader_factory(site: CallSite) -> Optional[LoaderFactory]:
    """The loader factory a loader site calls; None for a `DataLoader(...)` call."""
    return LOADER_FACTORIES.get(site.qualname or "")


def owner_of(model, site: CallSite):
    """The model of the file (this one, or a project file around it) whose loader site ``site`` is."""
    if model.loader_site(site.node) is site or model.site_of(site.node) is site:
        return model
    if model.project is not None and model.real_path is not None:
        for other in model.project.related_models(model.real_path):
            # A call the follower found building a loader (`loader = DataLoader if w else
            # InfiniteDataLoader; loader(ds, ...)`) is a site of its file even when its name
            # does not say so.
            if other.loader_site(site.node) is site or other.site_of(site.node) is site:
                return other
    return None


_QUESTION_NUMBERS = itertools.count()


class LoaderSites(Question[Sites]):
    key = "loaders"
    unknown = _NONE

    def __init__(
        self, callers: Optional[Dict[int, Collection[CallSite]]] = None, raw: bool = False, call=None,
        project_callers: Optional[Dict[int, Collection[tuple]]] = None,
    ) -> None:
        # With ``callers``, a parameter of one of those functions (by id) takes its value from
        # those calls only: "the loaders this epoch loop hands to the function". With ``raw``, a
        # generator hands a loader on only when it yields the batches as they come (`yield x, y`,
        # not `yield x.cuda(), y.cuda()`): its items are then still the loader's host batches.
        # With ``call`` ((function id, model, site)), that function's parameters take the
        # arguments of that one call (a generator of the project, where it is called). With
        # ``project_callers``, the same as ``callers`` for calls that may sit in other files of
        # the project: (model, call site) pairs.
        self._callers = callers
        self._raw = raw
        self.through_wrappers = not raw  # a prepared loader's batches arrive on the device
        self._call = call
        self._project_callers = project_callers
        if callers is not None or project_callers is not None:
            # A key of its own for as long as the process runs: answers are cached under it, and
            # an object's id is handed to a later question once this one is gone (which then
            # read answers worked out for other callers).
            self.key = f"loaders@{next(_QUESTION_NUMBERS)}"
        elif call is not None:
            self.key = f"loaders@call{id(call[2].node)}{'-raw' if raw else ''}"
        elif raw:
            self.key = "raw-loaders"

    def chosen_calls(self, info: FunctionInfo):
        if self._call is not None and self._call[0] == id(info):
            return [(self._call[1], self._call[2])]
        if self._project_callers is not None and id(info) in self._project_callers:
            return list(self._project_callers[id(info)])
        return None

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[Sites]:
        if not type(expr) is cst.Call:
            # `None` (a parameter's `dataloader=None`, `loader = None` before a branch builds one)
            # holds no loader, and a loop over it never starts: the other paths are all there is.
            if type(expr) is cst.Name and expr.value == "None":
                return _NOTHING
            if type(expr) is cst.Name and expr.value == "self" and ctx.class_name and not self._raw:
                # `return self` of `load_data()` on a wrapper whose `__iter__` goes over the
                # loader it built (`for data in self.dataloader: yield data`).
                held = self._held(flow.model, ctx.class_name)
                if held is not None:
                    return held
            index = _constant_index(expr)
            if index is not None:
                # `create_dataloader(...)[0]`: element 0 of what the helper returns, as for
                # `loader, dataset = create_dataloader(...)`.
                return flow.ask(self, expr.value, ctx, order, index)
            if type(expr) is cst.Subscript:
                return self._dict_item(flow, expr, ctx, order)
            return None
        model = flow.model
        qual = model.imports.qualify(expr.func)
        if qual == DATALOADER or qual in LOADER_FACTORIES:
            site = model.loader_site(expr)
            return ((site,), True) if site is not None else _NONE
        if (qual is None or model.loader_site(expr) is not None) and flow.ask(LOADER_CLASS, expr.func, ctx, order):
            # `loader = DataLoader if weighted else InfiniteDataLoader; loader(ds, pin_memory=True)`
            site = model.site_of(expr)
            return ((site,), True) if site is not None else _NONE
        # A function of the project runs before a wrapper's name is trusted: a project's own
        # `cycle(loader)` generator is not itertools' (see `repeated_passes`).
        targets = model.calls.targets_of_expression(expr, ctx, order)
        generators = [(owner, info) for owner, info in targets if info.generator]
        if generators:
            # Its parameters are this call's arguments (`metric_logger.log_every(loader, 50)`),
            # not those of every call of the generator.
            site = model.site_of(expr)
            answers = []
            for owner, info in generators:
                narrowed = self
                if site is not None and self._callers is None and len(generators) == 1:
                    narrowed = LoaderSites(raw=self._raw, call=(id(info), model, site))
                answers.append(narrowed.generated(owner, info))
            return self.combine(answers)
        wrapper = last_segment(qual or dotted_name(expr.func))
        if not targets and wrapper in ITERATION_WRAPPERS:
            positional = [a.value for a in expr.args if a.keyword is None and not a.star]
            if not positional or len(positional) != sum(a.keyword is None for a in expr.args):
                return _NONE
            if wrapper not in MULTI_ITERABLE_WRAPPERS:
                positional = positional[:1]
            return self.combine([flow.ask(self, p, ctx, order) for p in positional])
        func = expr.func
        wrapping = None
        if qual is None and type(func) is cst.Name and func.value in model.facts.classes:
            wrapping = (model, func.value)
        else:
            # `data_prefetcher(loader)` of another module, imported by name or through `from
            # dataloader.base import *`
            symbol = (model.symbol(qual) if qual is not None
                      else model.calls.star_symbol_at(func.value, ctx, order) if type(func) is cst.Name else None)
            if symbol is not None and symbol.kind == "class" and _draws_itself(symbol.model, symbol.info.name):
                wrapping = (symbol.model, symbol.info.name)
        if wrapping is not None:
            # `Prefetcher(loader)`: a class of the project that wraps a loader hands on its
            # batches (moved or changed, perhaps: raw ones only when its `__next__` returns
            # what it draws as it came, as `ForeverIterator(loader)` does).
            passes_on = hands_on_draws(*wrapping, expr)
            if self._raw and not passes_on:
                return _NONE
            found = [flow.ask(self, a.value, ctx, order) for a in expr.args if not a.star]
            sites = tuple(s for sites, _ in found for s in sites)
            # All it can be when its `__iter__` goes over what it holds each time it is iterated,
            # or its `__next__` draws from what it holds.
            exhaustive = bool(sites) and all(done for _, done in found) and (passes_on or _iterates_held(*wrapping))
            return (sites, exhaustive)
        through = passed_on(model, expr, ctx, order, ITERATION_WRAPPERS)
        if through is not None:
            return flow.ask(self, through, ctx, order)  # `iter_wrapper(enumerate(loader))`
        return None if flow.callee(expr, ctx, order) is not None else _NONE

    def _dict_item(self, flow: ValueFlow, item: cst.Subscript, ctx: Context, order: int) -> Optional[Sites]:
        """`dataloaders[phase]` of `dataloaders = {"train": loader, "val": val_loader}`: the
        loaders held under the key (a constant string), or under any key; None when the
        container is no dict the analysis can read."""
        if len(item.slice) != 1 or type(item.slice[0].slice) is not cst.Index:
            return None
        contents = contents_of(flow.model, item.value, ctx, order)
        key = item.slice[0].slice.value
        if type(key) is cst.SimpleString and isinstance(key.evaluated_value, str):
            state, values = lookup(contents, tag(key.evaluated_value))
            complete = state == PRESENT
        else:
            values, complete = every_value(contents)
        if not values:
            return None
        found = self.combine([v.flow.ask(self, v.expr, v.ctx, v.order) for v in values])
        return found if complete else (found[0], False)

    def _held(self, model, class_name: str) -> Optional[Sites]:
        """The loaders a class's generator `__iter__` iterates from its own attributes; None when
        it has no such `__iter__`. Never exhaustive: a subclass may iterate something else."""
        if not _iterates_held(model, class_name):
            return None
        info = model.facts.functions[f"{class_name}.__iter__"]
        answers = [
            model.values.ask(self, loop.node.iter, loop.ctx, model.order_of(loop.node.iter))
            for loop in info.loops if type(loop.node) is cst.For
        ]
        found = self.combine(answers)
        return (found[0], False) if found[0] else None

    def element(self, flow: ValueFlow, expr, index: int, ctx: Context, order: int) -> Optional[Sites]:
        """`a, b = loaders` where `loaders = []` got its items from `loaders.append(loader)`: any
        item may be any of those (`containers.list_elements`)."""
        if not type(expr) is cst.Name:
            return None
        values = list_elements(flow.model, expr.value, ctx, order)
        if not values:
            return None
        return self.combine([v.flow.ask(self, v.expr, v.ctx, v.order) for v in values])

    def generated(self, owner, info: FunctionInfo) -> Sites:
        """What iterating a generator of the project hands on: the loaders its `yield from`s
        delegate to, and those whose batches its `yield`s give."""
        answers = [owner.values.ask(self, s.value, s.ctx, s.order) for s in info.yields_from]
        answers += [self._yielded(owner, s) for s in info.yields]
        return self.combine(answers) if answers else _NONE

    def _yielded(self, owner, site: ReturnSite) -> Sites:
        """`yield batch` in a loop over a loader, `yield x.cuda(), y.cuda()` for its parts, or
        `yield next(it)`."""
        value = site.value
        iterator = owner.values.drawn_from(value, site.ctx, site.order) if type(value) is cst.Call else None
        if iterator is not None:
            return owner.values.ask(self, iterator, site.ctx, site.order)
        roots = _roots(value, self._raw)
        if roots is None:
            return _NONE
        loop = site.ctx.loop
        while loop is not None:
            if roots & loop.batch_names and type(loop.node) is cst.For:
                return owner.values.ask(self, loop.node.iter, loop.ctx, owner.order_of(loop.node.iter))
            for root in roots:
                call = loop.drawn.get(root)
                if call is not None:
                    site_ = owner.site_of(call)
                    iterator = owner.values.drawn_from(call, site_.ctx, site_.order) if site_ is not None else None
                    if iterator is not None:
                        return owner.values.ask(self, iterator, site_.ctx, site_.order)
            loop = loop.parent
        return _NONE

    def combine(self, answers: Sequence[Sites]) -> Sites:
        sites: List[CallSite] = []
        seen = set()
        for found, _ in answers:
            for site in found:
                if id(site) not in seen:
                    seen.add(id(site))
                    sites.append(site)
        return tuple(sites), all(exhaustive for _, exhaustive in answers)

    def augmented(self, flow: ValueFlow, assignment: Assignment, before: Sites, value: Sites) -> Sites:
        return _NONE

    def callers(self, flow: ValueFlow, info: FunctionInfo, sites: List[CallSite]) -> List[CallSite]:
        if self._callers is None or id(info) not in self._callers:
            return sites
        return list(self._callers[id(info)])


def _constant_index(expr) -> Optional[int]:
    """k for `f(...)[k]` (a small non-negative int written in place); None otherwise."""
    if not type(expr) is cst.Subscript or not type(expr.value) is cst.Call or len(expr.slice) != 1:
        return None
    index = expr.slice[0].slice
    if not type(index) is cst.Index or not type(index.value) is cst.Integer:
        return None
    value = int(index.value.value, 0)
    return value if value < 8 else None


def _roots(value: cst.BaseExpression, raw: bool) -> Optional[Set[str]]:
    """The names a yielded value is built from: `batch`, `(x, y)`, `{"x": x.cuda()}`. With
    ``raw``, None when some part is computed (a call) rather than selected (`batch["x"]`)."""
    if type(value) in (cst.Tuple, cst.List):
        parts = [e.value for e in value.elements]
    elif type(value) is cst.Dict:
        parts = [e.value for e in value.elements if type(e) is cst.DictElement]
    else:
        parts = [value]
    if raw and not all(_selected(p) for p in parts):
        return None
    return {name for name in map(root_name, parts) if name is not None}


def _selected(expr: cst.BaseExpression) -> bool:
    while type(expr) in (cst.Attribute, cst.Subscript):
        expr = expr.value
    return type(expr) is cst.Name


class LoaderClass(Question[bool]):
    """The expression names `DataLoader`, or a subclass of it of the project that takes its
    arguments as they are (no `__init__`, or one that hands `*args, **kwargs` to
    `super().__init__`), on every path: calling it builds a DataLoader from those arguments."""

    key = "loader-class"
    unknown = False
    follows_imports = True

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[bool]:
        model = flow.model
        qual = model.imports.qualify(expr)
        if qual == DATALOADER or qual in _LIBRARY_LOADER_CLASSES:
            return True
        if type(expr) is cst.IfExp:
            return None
        owner, info = None, None
        if qual is not None:
            symbol = model.symbol(qual)
            if symbol is not None and symbol.kind == "class":
                owner, info = symbol.model, symbol.info
        elif type(expr) is cst.Name and expr.value in model.facts.classes:
            if not model.bindings.reaching(expr.value, ctx, order):
                owner, info = model, model.facts.classes[expr.value]
        if info is not None:
            return _forwarding_subclass(owner, info)
        return None if qual is None and type(expr) is cst.Name else False

    def combine(self, answers: Sequence[bool]) -> bool:
        return bool(answers) and all(answers)

    def combine_callers(self, answers: Sequence[bool]) -> bool:
        return False  # a class handed in as an argument: not followed


_LOADER_BASES = frozenset({DATALOADER, "torch.utils.data.dataloader.DataLoader"})
# Library classes that build a `DataLoader` from the arguments they are given, unchanged:
# webdataset's `WebLoader(*args, **kw)` wraps `DataLoader(*args, **kw)` in its pipeline.
_LIBRARY_LOADER_CLASSES = frozenset({"webdataset.WebLoader", "webdataset.compat.WebLoader"})


def _forwarding_subclass(owner, info) -> bool:
    if not any(base in _LOADER_BASES for base in info.bases):
        return False
    init = owner.bindings.method(info.scope, "__init__")
    if init is None:
        return True
    params = init.node.params
    if params.star_arg is None or params.star_kwarg is None or len(params.params) != 1:
        return False
    star, kwargs = getattr(params.star_arg, "name", None), params.star_kwarg.name
    for site in init.sites:
        call = site.node
        func = call.func
        if (
            type(func) is cst.Attribute and func.attr.value == "__init__"
            and type(func.value) is cst.Call and dotted_name(func.value.func) == "super"
        ):
            given = [(a.star, dotted_name(a.value)) for a in call.args]
            return star is not None and given == [("*", star.value), ("**", kwargs.value)]
    return False


LOADER_CLASS = LoaderClass()
LOADERS = LoaderSites()
# The loaders whose host batches a value's items still are (see ``raw``).
RAW_LOADERS = LoaderSites(raw=True)


def loaders_held(model, expr: cst.BaseExpression, ctx: Context, order: float, question: LoaderSites = LOADERS) -> Sites:
    return model.values.ask(question, expr, ctx, order)


def loaders_iterated(model, loop, question: LoaderSites = LOADERS) -> Sites:
    """The loaders a `for` loop iterates (none for a `while` loop, or for a loop no run reaches)."""
    node = loop.node
    if not type(node) is cst.For or model.unreachable(node):
        return _NONE
    return model.values.ask(question, node.iter, loop.ctx, model.order_of(node.iter))


def loaders_drawn(model, call: cst.Call, question: LoaderSites = LOADERS) -> Sites:
    """The loaders a `next(iterator)` (or `iterator.next()`) call of the file draws a batch from."""
    site = model.site_of(call)
    iterator = model.values.drawn_from(call, site.ctx, site.order) if site is not None else None
    if iterator is None:
        return _NONE
    return model.values.ask(question, iterator, site.ctx, site.order)


def _draws_itself(model, class_name: str) -> bool:
    """The class hands out batches itself: it has an `__iter__`, a `__next__` or a `next`
    method (a prefetcher that wraps the loader it is given)."""
    functions = model.facts.functions
    return any(f"{class_name}.{name}" in functions for name in ("__iter__", "__next__", "next"))


def drawn_per_instance(model, site: CallSite, iterator: cst.BaseExpression) -> bool:
    """`next(self.loader)` in a method of a class the file builds more than once
    (`data_prefetcher(train_loader)`, `data_prefetcher(val_loader)`): which loader it draws from
    depends on the instance, so the draw says nothing about which loader trains; the callers'
    `prefetcher.next()` do."""
    name = dotted_name(iterator) or ""
    if not name.startswith("self.") or not site.ctx.class_name:
        return False
    return len(model.facts.calls_by_callee.get(site.ctx.class_name, ())) > 1


def drawn_batches(model, loop: LoopInfo) -> Dict[str, cst.Call]:
    """The names of a loop's body bound from `next(it)` where `it` draws a loader's batches as
    they come (or derived from such a name), each with its `next(...)` call."""
    memo = model._shared.setdefault("drawn-batches", {})
    known = memo.get(id(loop))
    if known is None:
        known = {}
        if loop.drawn:
            draws = {}
            for name, call in loop.drawn.items():
                if id(call) not in draws:
                    draws[id(call)] = bool(loaders_drawn(model, call, RAW_LOADERS)[0])
                if draws[id(call)]:
                    known[name] = call
        memo[id(loop)] = known
    return known


def batch_names(model, loop: Optional[LoopInfo]) -> Set[str]:
    """Every name that holds a batch (or something derived from one) in this loop's body: the
    targets of the loops around it, and values drawn with `next(...)` from a loader there."""
    names: Set[str] = set()
    while loop is not None:
        names |= loop.batch_names
        names.update(drawn_batches(model, loop))
        loop = loop.parent
    return names


def loop_target_hint(model, assignment: Assignment) -> Optional[str]:
    """A `for` target's kind hint ("batch", "loader-batch", "index"), also when what the loop
    iterates is a loader only the value model can see (`for x, y in sample_data(loader)`)."""
    hint = assignment.kind_hint
    if hint != "loop-target" or assignment.batch_hint is None or assignment.iterable is None:
        return hint
    iterable = assignment.iterable
    order = model.order_of(iterable)
    found = model.values.ask(RAW_LOADERS, iterable, assignment.ctx, order)
    if not found[0]:
        return hint
    enumerated = model.values.ask(ENUMERATED, iterable, assignment.ctx, order)
    if enumerated == _ALWAYS_ENUMERATED:
        # `pbar = enumerate(loader)`, then `for i, (x, y) in pbar`: an index, then the batch.
        return assignment.enumerated_hint or hint
    return hint if _ENUMERATE in enumerated else assignment.batch_hint


_ENUMERATE, _PLAIN = "enumerate", "plain"
_ALWAYS_ENUMERATED = frozenset({_ENUMERATE})


class Enumerated(Question[frozenset]):
    """Whether the expression's values are `enumerate(...)`, themselves or wrapped
    (`tqdm(enumerate(x))`): {"enumerate"} on every path, {"plain"} on none, both when it
    depends on the path."""

    key = "enumerated"
    unknown = frozenset({_PLAIN})

    def terminal(self, flow: ValueFlow, expr, ctx: Context, order: int) -> Optional[frozenset]:
        if type(expr) is cst.Call:
            model = flow.model
            wrapper = last_segment(model.imports.qualify(expr.func) or dotted_name(expr.func))
            if wrapper == "enumerate":
                return _ALWAYS_ENUMERATED
            targets = model.calls.targets_of_expression(expr, ctx, order)
            if wrapper in ITERATION_WRAPPERS and expr.args and not targets:
                return flow.ask(self, expr.args[0].value, ctx, order)
            if targets and all(_yields_counted(info) for _, info in targets):
                return _ALWAYS_ENUMERATED  # `for it, (x, y) in logger.log_every(...)`: a count first
            through = passed_on(model, expr, ctx, order, ITERATION_WRAPPERS)
            if through is not None:
                return flow.ask(self, through, ctx, order)
            return self.unknown
        return None if type(expr) in (cst.Name, cst.Attribute, cst.IfExp) else self.unknown

    def combine(self, answers: Sequence[frozenset]) -> frozenset:
        return frozenset().union(*answers)


ENUMERATED = Enumerated()


def _yields_counted(info) -> bool:
    """A generator of the project whose every `yield` is `i, item` with `i` the count of a loop
    of its own (`for i in range(...)`, `for i, obj in enumerate(...)`: a logger's `log_every`
    that counts the batches it hands on): iterating it is like iterating `enumerate(...)`."""
    if not info.generator or not info.yields or info.yields_from:
        return False
    counters = set()
    for loop in info.loops:
        node = loop.node
        if type(node) is not cst.For or type(node.iter) is not cst.Call:
            continue
        wrapper = dotted_name(node.iter.func)
        if wrapper == "range" and type(node.target) is cst.Name:
            counters.add(node.target.value)  # `for i in range(start, total):`
        elif wrapper == "enumerate" and type(node.target) is cst.Tuple and node.target.elements:
            first = node.target.elements[0].value  # `for i, obj in enumerate(loader):`
            if type(first) is cst.Name:
                counters.add(first.value)
    return bool(counters) and all(
        type(y.value) is cst.Tuple and len(y.value.elements) == 2 and type(y.value.elements[0].value) is cst.Name
        and y.value.elements[0].value.value in counters
        for y in info.yields
    )


def by_loader_site(model, key: str, consumers_of) -> Dict[int, list]:
    """{id(DataLoader site of this file): [consumer, ...]}, over this file and the project files
    around it, computed once per file under ``key``. ``consumers_of(other)`` yields (consumer,
    loader sites) pairs for one file; a consumer is listed once per site."""
    index = model._shared.get(key)
    if index is None:
        index = {}
        mine = {id(s) for s in loader_calls(model)}
        models = [model]
        if model.project is not None and model.real_path is not None and mine:
            models += model.project.related_models(model.real_path)
        for other in models:
            if other is not model and stops_at_start(other):
                continue  # a stale script that stops before its loops (model/broken_calls.py)
            for consumer, sites in consumers_of(other):
                for found in sites:
                    if id(found) in mine:
                        listed = index.setdefault(id(found), [])
                        if not any(known == consumer for known in listed):
                            listed.append(consumer)
        model._shared[key] = index
    return index


def _iterates_held(model, class_name: str) -> bool:
    """The class's `__iter__` is a generator whose `for` loop goes over one of its attributes
    (`for batch in self.loader:`, `for i, data in enumerate(self.dataloader):`): each pass over
    an instance is a pass over that loader."""
    info = model.facts.functions.get(f"{class_name}.__iter__")
    if info is None or not info.generator:
        return False
    return any(type(loop.node) is cst.For and _over_attribute(loop.node.iter) for loop in info.loops)


def _over_attribute(iterable: cst.BaseExpression) -> bool:
    if type(iterable) is cst.Call and dotted_name(iterable.func) == "enumerate" and iterable.args:
        iterable = iterable.args[0].value
    return (dotted_name(iterable) or "").startswith("self.")


def placed_by_framework(model, site: CallSite) -> bool:
    """The loader is handed to `accelerator.prepare(...)` (or Fabric's `setup_dataloaders`),
    which copies every batch it draws to the run's device, unless the file builds its
    `Accelerator(device_placement=False)`."""
    return id(site.node) in model.shared("framework-placed-loaders", _framework_placed)


def _framework_placed(model) -> frozenset:
    # The loader object itself: `prepare` wraps DataLoaders, and hands a generator over one
    # (`cycle(loader)`) back untouched.
    built = BuiltBy(DATALOADER)
    found = set()
    for call in model.method_calls("prepare", "prepare_data_loader", "setup_dataloaders"):
        handed = wrapped_arguments(model, call.node)
        if handed is None:
            continue
        for value in handed:
            found.update(model.values.ask(built, value, call.ctx, call.order))
    if found and any(_no_placement(site.node) for site in model.calls_to("accelerate.Accelerator")):
        return frozenset()
    return frozenset(found)


def _no_placement(call: cst.Call) -> bool:
    return any(
        a.keyword is not None and a.keyword.value == "device_placement" and dotted_name(a.value) == "False"
        for a in call.args
    )


def loader_consumers(model, site: CallSite) -> List[tuple]:
    """The loops, in this file and in the project files around it, that take batches from a
    DataLoader site of this file: those that iterate it with `for`, and those that draw from it
    with `next(...)` in their body. (model, LoopInfo) pairs."""
    def consumers_of(other):
        for loop in other.facts.loops:
            yield _Consumer(other, loop), loaders_iterated(other, loop)[0]
        for draw in [*other.facts.calls_by_callee.get("next", ()), *other.method_calls("next", "__next__")]:
            if draw.ctx.loop is not None:
                yield _Consumer(other, draw.ctx.loop), loaders_drawn(other, draw.node)[0]

    return [c.pair for c in by_loader_site(model, "loader-consumers", consumers_of).get(id(site), [])]


class _Consumer:
    """A (model, loop) pair compared by identity: a loop that both iterates and draws from a
    loader is one consumer."""

    __slots__ = ("pair",)

    def __init__(self, model, loop) -> None:
        self.pair = (model, loop)

    def __eq__(self, other) -> bool:
        return self.pair[0] is other.pair[0] and self.pair[1] is other.pair[1]

    __hash__ = None  # type: ignore[assignment]
