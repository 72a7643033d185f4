"""What the one walk over a file records: functions, loops, calls, assignments and their context."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

MODULE_SCOPE = "<module>"


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef
    key: str  # "name" for functions, "Class.name" for methods: how calls find it
    class_name: Optional[str]
    params: Tuple[str, ...]
    no_grad: bool  # decorated with torch.no_grad / inference_mode
    decorators: Tuple[str, ...] = ()  # qualified (or dotted) names of its decorators
    # Unique per definition: a name defined twice (generated or concatenated code) gets two
    # scopes, so that bindings are never looked up across both bodies.
    scope: str = ""
    order: int = 0  # when the `def` statement binds the name
    ctx: Optional["Context"] = None  # where the `def` statement sits
    class_scope: Optional[str] = None  # the defining class's scope, for methods
    body_ctx: Optional["Context"] = None  # the context of its body's top-level statements
    direct_marker: bool = False  # runs backward / optimizer.step itself
    direct_step: bool = False  # steps an optimizer itself
    # The innermost loop around each of its own steps (None: outside any loop of its body).
    step_loops: List[Optional["LoopInfo"]] = field(default_factory=list)
    step_contexts: List["Context"] = field(default_factory=list)  # where its own steps are
    loose_step: bool = False  # calls some other `.step()` or `*_step(...)` (an engine, a trainer)
    callees: Set[str] = field(default_factory=set)
    sites: List["CallSite"] = field(default_factory=list)  # the calls of its own body (not of nested defs)
    loops: List["LoopInfo"] = field(default_factory=list)  # every loop in its body
    returns: List[cst.BaseExpression] = field(default_factory=list)
    return_sites: List["ReturnSite"] = field(default_factory=list)  # the same values, with where they are read
    yields: List["ReturnSite"] = field(default_factory=list)  # `yield value`: what iterating its result gives
    yields_from: List["ReturnSite"] = field(default_factory=list)  # `yield from iterable`: it hands those items on
    generator: bool = False  # some `yield` in its own body: calling it runs nothing until it is iterated
    calls_save: bool = False  # calls torch.save itself
    set_epoch: bool = False  # calls .set_epoch(...) itself
    # The assignments, `for` loops and comprehension clauses of its own body (not of nested
    # defs or lambdas), in walk order: what names derive from what (rules' name flows).
    binders: List[cst.CSTNode] = field(default_factory=list)
    # The parameters it computes a loss for when handed them (model/target_arms.py; lazy).
    target_params: Optional[FrozenSet[str]] = None

    @property
    def receiver_params(self) -> int:
        """How many leading parameters a call does not pass: the `self`/`cls` of a method, the
        `ctx` an autograd Function's static `forward(ctx, x)` is handed by `apply`; none for a
        function or another `@staticmethod`."""
        if self.class_name is None:
            return 0
        if "staticmethod" in self.decorators:
            return 1 if self.params[:1] == ("ctx",) else 0
        return 1

    @property
    def memoized(self) -> bool:
        """Decorated with a cache of its results (`functools.lru_cache`, `functools.cache`,
        `cached_property`): its body runs once per distinct arguments, not at every call."""
        return any(d.rsplit(".", 1)[-1] in _MEMOIZING for d in self.decorators)


_MEMOIZING = frozenset({"lru_cache", "cache", "cached_property"})


@dataclass(eq=False)
class LoopInfo:
    node: cst.CSTNode  # For or While
    parent: Optional["LoopInfo"]  # enclosing loop in the same function
    function: Optional[FunctionInfo]
    targets: Tuple[str, ...]  # names bound by the `for` target
    ctx: "Context"  # where the loop statement itself sits
    over_loader: bool = False  # iterates something that looks like a DataLoader
    direct_marker: bool = False  # body runs backward / optimizer.step (nested loops included)
    callees: Set[str] = field(default_factory=set)  # same-module functions called in the body
    sites: List["CallSite"] = field(default_factory=list)  # every call in the body, nested loops included
    children: List["LoopInfo"] = field(default_factory=list)
    batch_names: Set[str] = field(default_factory=set)  # loop targets and names derived from them
    # Names bound in its body from `next(iterator)` (or derived from such a name), each with that
    # `next(...)` call: batches when the iterator draws from a DataLoader (`model/loaders.py`).
    drawn: Dict[str, cst.Call] = field(default_factory=dict)
    set_epoch: bool = False  # body calls .set_epoch(...)
    own_step: bool = False  # its own body (not a nested loop) runs an optimizer step
    # Where its own body steps an optimizer: a periodic test holding one of several steps (a
    # GAN's lazy regulariser, `if i % 4 == 0: ...; g_optim.step()`) is no accumulation boundary.
    step_contexts: List["Context"] = field(default_factory=list)
    has_step: bool = False  # its body (nested loops included) runs an optimizer step
    loose_step: bool = False  # its body calls some other `.step()` or `*_step(...)`
    env_step: bool = False  # steps an RL environment: host values are needed every iteration
    start: int = 0  # source order when the loop statement starts (before its targets are bound)
    end: int = 0  # source order when it ends: every event of its body lies in (start, end]

    def within(self, outer: "LoopInfo") -> bool:
        """This loop is ``outer`` or nested in it (in the same function)."""
        loop: Optional[LoopInfo] = self
        while loop is not None:
            if loop is outer:
                return True
            loop = loop.parent
        return False


@dataclass(eq=False)
class Guard:
    """An `if` test a block runs under: in its body (``positive``), in its `else`, or after
    `if test: continue` / `return` (``exits``: the rest of the block runs when the test is
    false)."""

    test: cst.BaseExpression
    positive: bool
    ctx: "Context"  # where the test is evaluated
    order: int
    exits: bool = False
    steps: bool = False  # an optimizer steps under it: the accumulation boundary, not a periodic gate


@dataclass(eq=False)
class Abort:
    """A block that ends by leaving for good: the process (`sys.exit(1)`, ``kind`` "exit"), the
    function by an exception (`raise`, "raise") or its loop (`break`, "break"). Its statements run
    at most once per run of ``loop`` (the innermost loop around the block, None outside loops),
    unless ``caught``: a `raise` inside a `try` with handlers in that loop's body (or in the
    function, outside loops) may be caught there, and the loop goes on."""

    kind: str
    loop: Optional["LoopInfo"]
    caught: bool


@dataclass(frozen=True, eq=False)
class Context:
    """Where a node sits. One object is shared by every node of a block, so recording is cheap."""

    function: Optional[FunctionInfo] = None
    loop: Optional[LoopInfo] = None  # innermost loop (same function)
    gated: bool = False  # under a periodic or rank-0 condition
    rank_gated: bool = False  # under a rank-0 / main-process condition
    gate_test: Optional[cst.BaseExpression] = None  # innermost periodic (`%`) test around the node
    conditional: bool = False  # under some `if` in its function
    no_grad: bool = False  # inside `with torch.no_grad()` / inference_mode in its function
    class_name: Optional[str] = None
    class_scope: Optional[str] = None  # unique per class definition ("class:Trainer")
    # The context of the enclosing block of the same scope: a binding made in a context on a
    # read's chain of outer contexts has run before the read (structured code dominates).
    outer: Optional["Context"] = None
    guard: Optional[Guard] = None  # the `if` this block adds (the others are on the outer chain)
    in_try: bool = False  # in the body of a `try` with handlers, within the innermost loop (or function)
    aborts: Tuple[Abort, ...] = ()  # the blocks around it that end by leaving for good, outermost first

    def derive(self, **changes) -> "Context":
        # A copy of the fields, not dataclasses.replace: the walk derives a context for every
        # block, and replace's field-by-field checks cost more than the rest of the step.
        derived = object.__new__(Context)
        fields = derived.__dict__
        fields.update(self.__dict__)
        fields["outer"] = self
        fields.update(changes)
        return derived

    @property
    def scope(self) -> str:
        return self.function.scope if self.function is not None else MODULE_SCOPE


@dataclass(eq=False)
class ReturnSite:
    """A `return value` (or `yield value`) statement: the value, and where it is evaluated."""

    value: cst.BaseExpression
    ctx: Context
    order: int


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    ctx: Context
    qualname: Optional[str]  # canonical name when the callee is imported (torch.save, ...)
    method: Optional[str]  # attribute name for `x.method(...)` calls
    receiver: Optional[cst.BaseExpression]  # `x` in `x.method(...)`
    receiver_name: Optional[str]  # dotted name of the receiver when it is a plain chain
    outer: Optional["CallSite"]  # the call whose arguments hold this one
    assigned_to: Optional[str]  # base name of the assignment target this call's value flows into
    stmt: Tuple[int, int]  # (block id, statement index), to compare neighbouring statements
    order: int  # source order among recorded events
    with_item: bool = False  # the call is an item of a `with` statement


@dataclass(eq=False)
class Assignment:
    target: str  # dotted name ("loss", "self.model")
    value: Optional[cst.BaseExpression]  # None when the value is not known (loop targets)
    ctx: Context
    order: int
    index: Optional[int] = None  # element of a tuple unpack: `a, b = f()` binds a to index 0
    kind_hint: Optional[str] = None  # "batch" for loop targets over loaders
    augmented: bool = False  # `total += loss`
    statement: Optional[cst.CSTNode] = None  # the Assign/AugAssign/AnnAssign node
    iterable: Optional[cst.BaseExpression] = None  # for loop targets: what the `for` iterates
    # For a "loop-target": the hint it gets if the iterable turns out to be a loader
    # (`loaders.loop_target_hint`), when the walk could not tell by its name.
    batch_hint: Optional[str] = None
    # The same when the iterable turns out to be `enumerate(loader)` held in a name (`pbar`).
    enumerated_hint: Optional[str] = None


def bound_element(assignment: "Assignment") -> Optional[cst.BaseExpression]:
    """What a binding gives its name: its value, or, for one name of a tuple unpacked from a
    tuple or list written out (`x, mel = a, b.cuda()`), its element; None when that cannot be
    told (an element of a call's result, a starred element on the way)."""
    value = assignment.value
    if value is None or assignment.index is None:
        return value
    if type(value) not in (cst.Tuple, cst.List) or assignment.index >= len(value.elements):
        return None
    if any(type(e) is cst.StarredElement for e in value.elements):
        return None
    return value.elements[assignment.index].value


@dataclass(eq=False)
class ItemStore:
    """`d[key] = value` (or `del d[key]`: no value), for what a dict holds after it."""

    key: cst.BaseExpression
    value: Optional[cst.BaseExpression]
    ctx: Context
    order: int


@dataclass(eq=False)
class AutocastSite:
    call: CallSite
    with_ctx: Context  # context of the `with` statement
    no_grad: bool = False  # the block also runs without autograd: nothing to scale
    body_trains: bool = False  # backward or a step runs inside the block
    body_steps: bool = False  # an optimizer step runs inside the block
    callees: Set[str] = field(default_factory=set)  # same-module functions called inside it


@dataclass(eq=False)
class FormattedValue:
    """A value rendered as text: an f-string field, or an argument of print/logging calls."""

    expr: cst.BaseExpression
    ctx: Context
    via: str  # "f-string", "print", "logging", ...
    has_format_spec: bool = False


@dataclass(eq=False)
class Condition:
    """A test evaluated at run time: `if`/`elif`/`while` tests, `assert` statements and the `if`
    clauses of comprehensions."""

    test: cst.BaseExpression
    ctx: Context  # where the statement sits
    kind: str  # "if", "while", "assert", "comprehension if" (a filter clause, tested per item)
    loop: Optional[LoopInfo] = None  # for `while`: the loop the test runs for


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    bases: Tuple[str, ...]  # qualified names where imported, else dotted names
    scope: str = ""  # unique per definition: "class:Name", then "class:Name@2", ...


@dataclass
class Facts:
    functions: Dict[str, FunctionInfo] = field(default_factory=dict)  # the first definition per key
    function_defs: Dict[str, List[FunctionInfo]] = field(default_factory=dict)  # every definition per key
    loops: List[LoopInfo] = field(default_factory=list)
    calls: List[CallSite] = field(default_factory=list)
    calls_by_method: Dict[str, List[CallSite]] = field(default_factory=dict)
    calls_by_qualname: Dict[str, List[CallSite]] = field(default_factory=dict)
    calls_by_callee: Dict[str, List[CallSite]] = field(default_factory=dict)  # same-module callee key
    assignments: Dict[Tuple[str, str], List[Assignment]] = field(default_factory=dict)
    # (scope, name) of `x[k] = v`, `x[i][:n] = v` -> [source order of the first store, ids of the
    # innermost loops the stores sit in, whether every store writes a number written in the code
    # (`attr[:, 7] = 4`: no host data)]: each question about it costs O(1), however many stores.
    subscript_stores: Dict[Tuple[str, str], List] = field(default_factory=dict)
    item_stores: Dict[str, List[ItemStore]] = field(default_factory=dict)  # dotted name of `x` -> its `x[k] = v`
    formatted: List[FormattedValue] = field(default_factory=list)
    autocasts: List[AutocastSite] = field(default_factory=list)
    backward_receivers: Set[Tuple[str, str]] = field(default_factory=set)  # (scope, name)
    timing_statements: Dict[int, Set[int]] = field(default_factory=dict)  # block id -> statement indexes
    # block id of the body of an `if` with no `else` and at most two statements -> the position
    # of that `if` in its own block (`if device == "cuda": torch.cuda.synchronize()`)
    small_if_bodies: Dict[int, Tuple[int, int]] = field(default_factory=dict)
    # block id of any arm of an `if`/`elif`/`else` chain -> the position of its first `if` in
    # its own block: what ran before a statement of the arm, walking out of the `if`
    if_bodies: Dict[int, Tuple[int, int]] = field(default_factory=dict)
    main_blocks: List[cst.If] = field(default_factory=list)  # module-level `if __name__ == "__main__":`
    # (scope, name) -> the calls of `with <call> as name` (`with amp.scale_loss(loss, opt) as
    # scaled_loss:`); not bindings the value model follows: what `__enter__` returns varies
    with_targets: Dict[Tuple[str, str], List[cst.Call]] = field(default_factory=dict)
    conditions: List[Condition] = field(default_factory=list)
    subscripts: List[Tuple[cst.Subscript, Context]] = field(default_factory=list)  # inside loops and functions
    assert_messages: List[cst.BaseExpression] = field(default_factory=list)  # `assert test, message`, `raise E(message)`
    classes: Dict[str, ClassInfo] = field(default_factory=dict)  # the first definition per name
    module_imports: List[cst.CSTNode] = field(default_factory=list)  # top-level import statements
    # Comprehensions outside lambdas, outer before inner, and the outermost lambdas (the walk
    # does not enter them): what `value_flow.comprehension_reads` looks at, without a second walk.
    comprehensions: List[cst.CSTNode] = field(default_factory=list)
    lambdas: List[cst.Lambda] = field(default_factory=list)
    # Blocks that may not run although nothing tests a condition: `except` handlers, the `else`
    # of a `try` or of a loop (by context id).
    optional_blocks: Set[int] = field(default_factory=set)
    # The contexts of `except` bodies (by id), and whether the handler catches StopIteration.
    handlers: Dict[int, bool] = field(default_factory=dict)
    # The contexts of `except` bodies (by id) that handle a failed step: running out of GPU
    # memory (`except torch.cuda.OutOfMemoryError:`, or a RuntimeError handler that says so or
    # empties the cache) or a non-finite loss (a handler that says "nan"): they run on the
    # steps that failed, not on every step.
    failure_handlers: Set[int] = field(default_factory=set)
    # The context of each `except` body (by id) -> the context of its `try` body.
    handler_tries: Dict[int, "Context"] = field(default_factory=dict)
    # The bodies of `try` statements whose every handler leaves (`raise`, `return`, `sys.exit`,
    # click's `ctx.fail(...)`), and of `with` statements (not `suppress(...)`), by context id,
    # with the order at which the statement ends: a statement after it runs only when the body
    # ran to its end.
    sealed_tries: Dict[int, int] = field(default_factory=dict)
    # Blocks no run executes: the body of `if 0:`/`if False:`, the `else` of `if 1:`/`if True:`
    # (code switched off by hand), and (first, last) statements after a `continue`, `break`,
    # `return` or `raise` of the same block. Findings in them are not reported (engine).
    dead_blocks: List[object] = field(default_factory=list)
    # Arms that run only on an old torch (version_gates.py): (block, version, inclusive).
    version_gates: List[Tuple[object, Tuple[int, ...], bool]] = field(default_factory=list)
    # The values handed to `self.register_buffer(name, value)` (ids): tensors that move with
    # their module, unlike a plain tensor attribute.
    buffer_values: Set[int] = field(default_factory=set)
    star_import: bool = False  # `from m import *`: module-level names may come from there
    uses_cuda: bool = False
