"""The single walk over a file's syntax tree that records every fact the rules query."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from advisor.model.facts import (
    Abort,
    Assignment,
    AutocastSite,
    CallSite,
    ClassInfo,
    Condition,
    Context,
    Facts,
    FormattedValue,
    FunctionInfo,
    Guard,
    ItemStore,
    LoopInfo,
    ReturnSite,
)
from advisor.model.redefined import replaced_definitions
from advisor.model.version_gates import old_torch_arm
from advisor.model.names import NO_GRAD_CONTEXTS, ImportTable, dotted_name, is_main_test, root_name
from advisor.model.walk import Walker, children

AUTOCAST_NAMES = frozenset({"torch.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"})
TIMING_FUNCTIONS = frozenset(
    {
        "time.time",
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "time.process_time",
        "time.time_ns",
        "timeit.default_timer",
    }
)
# Calls that name the accelerator a run has (`torch.accelerator.current_accelerator()`, PyTorch
# 2.6+): a CUDA device on a GPU box, so evidence of CUDA as `"cuda"` is.
ACCELERATOR_DEVICE_CALLS = frozenset({"torch.accelerator.current_accelerator"})
_REPORTING_CALLS = frozenset({"print", "info", "debug", "warning", "warn", "log", "write", "format"})
# Receivers of `.step()` that are optimizers (`optimizer`, `opt_g`, `self.optim`), and
# not schedulers or RL environments.
# A stopwatch's start and stop by the tic/toc convention (`timer.tic()`, `meter.iter_toc()`):
# the statement reads a clock through an object this file cannot see into.
TIMER_METHOD = re.compile(r"(^|_)(tic|toc)$")
_OPTIMIZER_NAME = re.compile(r"(^|_)(optim\w*|opt|optimi[sz]er\w*)($|_)|optimi[sz]er", re.IGNORECASE)
_SCALER_NAME = re.compile(r"scaler", re.IGNORECASE)
_ENV_NAME = re.compile(r"env", re.IGNORECASE)
# A table of loaders by split (`loaders`, `dataloaders`, `dls`), not a loader's settings (`loader_cfg`).
_LOADER_TABLE = re.compile(r"(?:^|_)(?:data_?)?loaders$|(?:^|_)dls$", re.IGNORECASE)
_LOADER_NAME = re.compile(r"loader|(^|_)dl($|_)", re.IGNORECASE)
_RANK_NAME = re.compile(
    r"^(rank|local_rank|global_rank|node_rank|dist_rank|distributed_rank|trainer_rank|world_rank|process_rank|proc_rank|is_master_node"
    r"|is_main_node|is_chief|is_main_process|is_local_main_process|is_global_zero"
    r"|is_master|master_process|is_main|is_rank_zero|is_rank0|main_process|is_world_process_zero"
    r"|is_local_process_zero|is_master_ordinal|get_rank|get_global_rank|get_local_rank|gpu_index|gpu_rank|local_gpu_rank"
    r"|is_master_process|is_master_rank|is_main_rank|is_rank_0)$",
    re.IGNORECASE,  # module constants too: `RANK = int(os.getenv("RANK", -1))`, `if RANK in {-1, 0}:`
)
_ITER_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip"})
_TRAINER_GATES = frozenset({"should_save", "should_log", "should_evaluate"})
def _target_names(node: cst.BaseExpression) -> List[Tuple[str, Optional[int]]]:
    """Names bound by an assignment or loop target, with their index in a tuple unpack."""
    if type(node) in (cst.Tuple, cst.List):
        out: List[Tuple[str, Optional[int]]] = []
        for i, element in enumerate(node.elements):
            value = element.value
            if type(value) is cst.StarredElement:
                value = value.value
            for name, _ in _target_names(value):
                out.append((name, i))
        return out
    if type(node) is cst.StarredElement:
        return _target_names(node.value)
    name = dotted_name(node)
    return [(name, None)] if name is not None else []


def _next_call(value: cst.Call) -> Optional[cst.Call]:
    """`next(it)` or `next(it, default)`, or the old `it.next()`: the call itself (whether `next`
    is the builtin is for the model to say: the walk cannot see every binding yet)."""
    func = value.func
    if type(func) is cst.Name and func.value == "next" and value.args and value.args[0].keyword is None:
        return value
    if type(func) is cst.Attribute and func.attr.value in ("next", "__next__") and not value.args:
        return value
    return None


_OOM_TEXT = re.compile(r"out of memory|\bOOM\b", re.IGNORECASE)
# What a handler for a step whose loss or gradients went non-finite says.
_NON_FINITE_TEXT = re.compile(r"\bnan\b|non-finite|not finite", re.IGNORECASE)


def _recovers_from_failure(caught: List[Optional[cst.BaseExpression]], body: cst.BaseSuite) -> bool:
    """An `except` clause for a step that failed: running out of GPU memory (it names
    `OutOfMemoryError`, or it catches RuntimeError, what an out-of-memory error was before torch
    1.13, and its body says "out of memory" or empties the allocator's cache: YOLOv6's fall-back
    to the CPU for one batch, fairseq's skipped batch), or a loss that went non-finite (a
    RuntimeError or FloatingPointError handler that says "nan" or "non-finite": it dumps the
    batch for a post-mortem), or an fp16 step whose gradients overflowed (`except OverflowError:`,
    fairseq's skipped update)."""
    names = [(dotted_name(n) or "").rsplit(".", 1)[-1] for n in caught if n is not None]
    if "OutOfMemoryError" in names or "FloatingPointError" in names or "OverflowError" in names:
        return True
    if "RuntimeError" not in names:
        return False
    stack = list(children(body))
    while stack:
        node = stack.pop()
        if type(node) is cst.SimpleString and (_OOM_TEXT.search(node.value) or _NON_FINITE_TEXT.search(node.value)):
            return True
        if type(node) is cst.Call and (dotted_name(node.func) or "").endswith("empty_cache"):
            return True
        stack.extend(children(node))
    return False


def _has_enumerate(iterable: cst.BaseExpression) -> bool:
    """`enumerate(loader)`, also inside `tqdm(...)` or `iter(...)`, and around them."""
    while type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.args:
        if iterable.func.value == "enumerate":
            return True
        if iterable.func.value not in _ITER_WRAPPERS:
            return False
        iterable = iterable.args[0].value
    return False


def is_periodic_test(test: cst.BaseExpression) -> bool:
    """`step % N == 0`, `rank == 0`, `accelerator.is_main_process` and combinations of them."""
    return gate_kinds(test) != (False, False)


_JUMPS = (cst.Continue, cst.Break, cst.Return, cst.Raise)


def _fails_always(small: cst.BaseSmallStatement) -> bool:
    """`assert False`, `assert 0`, `assert(0)`: raises whenever it runs (unless Python runs with
    `-O`, which training scripts are not)."""
    if type(small) is not cst.Assert:
        return False
    test = small.test
    while type(test) is cst.Tuple and len(test.elements) == 1:
        test = test.elements[0].value
    return (type(test) is cst.Name and test.value == "False") or (type(test) is cst.Integer and test.value == "0")
# Calls named like a step that update no parameter: XLA's and Habana's `mark_step()` cut the
# lazy graph (Grad-CAM calls it after a backward that only computes saliency).
_NOT_OPTIMIZER_STEPS = frozenset({"mark_step"})
_TIMING_EVENTS = frozenset({"torch.cuda.Event", "torch.Event", "torch.cuda.streams.Event"})


def _times(call: cst.Call) -> bool:
    return any(
        a.keyword is not None and a.keyword.value == "enable_timing" and type(a.value) is cst.Name and a.value.value == "True"
        for a in call.args
    )
_GRAD_OFF_DECORATOR = re.compile(r"(^|_)(inference_mode|no_grad)$")


def _draws_first(node: cst.Try) -> bool:
    """A simple statement directly in the `try` body calls `next(it)`, `it.next()` or
    `it.__next__()` (only those: each statement is looked at for one `try`, whatever the nesting)."""
    for statement in node.body.body:
        if not type(statement) is cst.SimpleStatementLine:
            continue
        stack: List[cst.CSTNode] = list(statement.body)
        while stack:
            item = stack.pop()
            if type(item) is cst.Call:
                func = item.func
                if (type(func) is cst.Name and func.value == "next") or (
                    type(func) is cst.Attribute and func.attr.value in ("next", "__next__") and not item.args
                ):
                    return True
            stack.extend(children(item))
    return False


def gate_kinds(test: cst.BaseExpression) -> Tuple[bool, bool]:
    """(has a `%` term, has a rank or main-process term)."""
    modulo = rank = False
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.BinaryOperation:
            if type(node.operator) is cst.Modulo or _power_of_two_test(node):
                modulo = True
            stack.extend((node.left, node.right))
        elif type(node) is cst.BooleanOperation:
            stack.extend((node.left, node.right))
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        elif type(node) is cst.Comparison:
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)
        elif type(node) is cst.Call:
            stack.append(node.func)
            if type(node.func) is cst.Name and node.func.value == "int" and len(node.args) == 1:
                stack.append(node.args[0].value)  # `int(os.environ["RANK"]) == 0`
        elif type(node) in (cst.Name, cst.Attribute):
            last = node.value if type(node) is cst.Name else node.attr.value
            if _RANK_NAME.match(last):
                rank = True
            elif type(node) is cst.Attribute and last in _TRAINER_GATES:
                # Hugging Face's Trainer: `args.should_save` holds on the main process only;
                # `control.should_log` / `should_evaluate` / `should_save` are set by its
                # callbacks every `logging_steps` / `eval_steps` / `save_steps`.
                owner = (dotted_name(node.value) or "").rsplit(".", 1)[-1]
                if owner == "args" and last == "should_save":
                    rank = True
                elif owner == "control":
                    modulo = True
        elif type(node) is cst.Subscript:
            # `self.config["global_rank"] == 0`: the rank kept in a settings dict
            key = string_key(node)
            if key is not None and _RANK_NAME.match(key):
                rank = True
    return modulo, rank


def _power_of_two_test(node: cst.BinaryOperation) -> bool:
    """`n & (n - 1)`: zero when `n` is a power of two, a test that holds on ever rarer passes
    (`if is_power2(epoch):` evaluating at epochs 1, 2, 4, 8, ...)."""
    if type(node.operator) is not cst.BitAnd:
        return False
    for one, other in ((node.left, node.right), (node.right, node.left)):
        if (type(other) is cst.BinaryOperation and type(other.operator) is cst.Subtract
                and type(other.right) is cst.Integer and other.right.value == "1"
                and type(one) is cst.Name and type(other.left) is cst.Name and one.value == other.left.value):
            return True
    return False


def string_key(node: cst.Subscript) -> Optional[str]:
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return None
    value = node.slice[0].slice.value
    return value.evaluated_value if type(value) is cst.SimpleString and isinstance(value.evaluated_value, str) else None


def _constant_truth(test: cst.BaseExpression) -> Optional[bool]:
    """The truth of a test written as a constant (`if 0:`, `if True:`, `if not 1:`); None for any
    other test."""
    negated = False
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, negated = test.expression, not negated
    if type(test) is cst.Integer:
        truth = int(test.value) != 0 if test.value.isdigit() else None
    elif type(test) is cst.Name and test.value in ("True", "False", "None"):
        truth = test.value == "True"
    else:
        return None
    return None if truth is None else truth != negated


def _exits_only(body: cst.BaseSuite) -> bool:
    """The block always leaves: it ends with `continue`, `return` (with or without a value) or
    `raise` (`if isinstance(model, DDP): save(model.module); return`)."""
    statements = body.body
    if not statements:
        return False
    last = statements[-1]
    small = last.body if type(last) is cst.SimpleStatementLine else (last,)
    return bool(small) and type(small[-1]) in (cst.Continue, cst.Return, cst.Raise)


_EXIT_CALLS = frozenset({"sys.exit", "os._exit", "os.abort"})
_EXIT_BUILTINS = frozenset({"exit", "quit"})
_CLICK_EXITS = frozenset({"fail", "abort", "exit"})


def _leaves_for_good(body: cst.BaseSuite, imports: ImportTable) -> Optional[str]:
    """How a block leaves for good, when its last statement does: "exit" (`sys.exit(1)`,
    `exit()`, `os._exit`), "raise", "break" or "return" (which leaves the loops of its function
    for good, though a helper's caller may call again on the next step); None otherwise
    (`continue` comes back on the next step)."""
    statements = body.body
    if not statements or not type(statements[-1]) is cst.SimpleStatementLine:
        return None
    last = statements[-1].body[-1] if statements[-1].body else None
    if type(last) is cst.Raise:
        return "raise"
    if type(last) is cst.Break:
        return "break"
    if type(last) is cst.Return:
        return "return"
    if type(last) is cst.Expr and type(last.value) is cst.Call:
        func = last.value.func
        qual = imports.qualify(func)
        if qual in _EXIT_CALLS or (qual is None and dotted_name(func) in _EXIT_CALLS):
            return "exit"  # `import sys` in the function itself, then `sys.exit(1)`
        if type(func) is cst.Name and func.value in _EXIT_BUILTINS and imports.qualify(func) is None:
            return "exit"
    return None


def _is_continue_only(body: cst.BaseSuite) -> bool:
    statements = body.body
    if len(statements) != 1:
        return False
    first = statements[0]
    small = first.body if type(first) is cst.SimpleStatementLine else (first,)
    return len(small) == 1 and type(small[0]) is cst.Continue


# `torch.cuda` functions that seed: calling them is no sign that tensors reach the GPU.
_CUDA_QUERIES = frozenset({
    "manual_seed", "manual_seed_all", "seed", "seed_all", "get_rng_state", "get_rng_state_all", "set_rng_state",
    "set_rng_state_all",
})


def _cuda_test(test: cst.BaseExpression) -> Optional[cst.Attribute]:
    """The `torch.cuda` of `if torch.cuda.is_available():` (or `not` it)."""
    while type(test) is cst.UnaryOperation:
        test = test.expression
    func = test.func if type(test) is cst.Call else None
    if type(func) is cst.Attribute and func.attr.value == "is_available" and type(func.value) is cst.Attribute:
        return func.value if func.value.attr.value == "cuda" else None
    return None


class ModelBuilder(Walker):
    """Walks the tree once, in source order, recording facts with the context they occur in."""

    index_statements = True  # for positions: see Walker

    def __init__(self) -> None:
        super().__init__()
        self.facts = Facts()
        self.imports = ImportTable()
        self.ctx = Context()
        self._module_ctx = self.ctx
        self._cuda_queries: Set[int] = set()  # ids of `torch.cuda` in `torch.cuda.manual_seed`...
        self._stack: List[Context] = []
        # Blocks being walked, and how many contexts a statement that turns autograd off for
        # the rest of its block pushed in each (popped as the block ends).
        self._open_blocks: List[list] = []
        self._classes: List[ClassInfo] = []
        self._class_owners: List[Optional[FunctionInfo]] = []  # the function each open class body sits in
        self._scope_counts: Dict[str, int] = {}
        self.statement_orders: Dict[int, int] = {}
        self._calls: List[CallSite] = []
        self._assign_base: List[Optional[str]] = [None]
        self._stmt_pos: Dict[int, Tuple[int, int]] = {}
        self._stmt: Tuple[int, int] = (0, 0)
        self._small_if_bodies: Dict[int, Tuple[int, int]] = {}
        self._if_bodies: Dict[int, Tuple[int, int]] = {}
        self._blocks = 0
        self._order = 0
        self._sealing: Dict[int, Context] = {}
        self._try_bodies: List[Context] = []  # the `try` bodies around the walk, innermost last
        self._try_nodes: List[cst.Try] = []  # their statements
        self._pending_loops: Dict[int, LoopInfo] = {}
        self._pending_functions: Dict[int, FunctionInfo] = {}
        self._if_gates: Dict[int, Tuple[bool, bool]] = {}
        self._if_ctx: Dict[int, Tuple[Context, int]] = {}
        self._engines: Set[Tuple[str, str]] = set()  # receivers of `x.backward(loss)`: their `.step()` steps
        self._with_flags: Dict[int, bool] = {}
        self._with_items: Dict[int, bool] = {}  # autocast-like call id -> the with also disables grad
        self._with_of_call: Dict[int, int] = {}
        # CUDA events made with `enable_timing=True`, and the names they are stored in: their
        # `.record()` calls are timing code.
        self._timing_event_calls: Set[int] = set()
        self._timing_events: Set[str] = set()
        self._autocasts_of_with: Dict[int, List[AutocastSite]] = {}
        self._autocast_stack: List[AutocastSite] = []

    # -- context bookkeeping -------------------------------------------------------------
    def _push(self, ctx: Context) -> None:
        self._stack.append(self.ctx)
        self.ctx = ctx

    def _pop(self) -> None:
        self.ctx = self._stack.pop()

    def _next_order(self) -> int:
        self._order += 1
        return self._order

    def statement_started(self, node: cst.CSTNode) -> None:
        # What a node reads, it reads as its statement starts: before anything the statement binds.
        self.statement_orders[id(node)] = self._order

    def _register_block(self, statements) -> None:
        self._blocks += 1
        for i, statement in enumerate(statements):
            self._stmt_pos[id(statement)] = (self._blocks, i)

    def _enter_statement(self, node: cst.CSTNode) -> None:
        pos = self._stmt_pos.get(id(node))
        if pos is not None:
            self._stmt = pos

    def visit_Module(self, node: cst.Module) -> None:
        self._register_block(node.body)
        self._open_blocks.append([0])

    def leave_Module(self, node: cst.Module) -> None:
        self._close_block()
        # A definition that a later one of the same name replaces unused never runs.
        self.facts.dead_blocks.extend((statement,) for statement in replaced_definitions(node))

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._close_block()

    def _close_block(self, keep: bool = False) -> None:
        """Pops the contexts the block's statements pushed; with ``keep``, the block stays open."""
        pushed = self._open_blocks[-1] if keep else self._open_blocks.pop()
        for _ in range(pushed[0]):
            self._pop()
        pushed[0] = 0

    def _grad_switch(self, node: cst.SimpleStatementLine) -> Optional[bool]:
        """What a statement of its own does to autograd for the rest of the block: False for
        `torch.no_grad().__enter__()` or `torch.set_grad_enabled(False)` (an evaluation script's
        top), True for `torch.enable_grad().__enter__()` or `torch.set_grad_enabled(True)` (back
        on before training); None for any other statement."""
        if len(node.body) != 1 or type(node.body[0]) is not cst.Expr or type(node.body[0].value) is not cst.Call:
            return None
        call = node.body[0].value
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "__enter__" and type(func.value) is cst.Call:
            qual = self.imports.qualify(func.value.func)
            return False if qual in NO_GRAD_CONTEXTS else True if qual == "torch.enable_grad" else None
        qual = self.imports.qualify(func)
        if qual not in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled") or len(call.args) != 1:
            return None
        value = call.args[0].value
        return {"False": False, "True": True}.get(value.value) if type(value) is cst.Name else None

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._open_blocks.append([0])
        owner = self._small_if_bodies.pop(id(node), None)
        self._register_block(node.body)
        body = node.body
        for index in range(len(body) - 1):
            statement = body[index]
            if type(statement) is cst.SimpleStatementLine and (
                    type(statement.body[-1]) in _JUMPS or _fails_always(statement.body[-1])):
                # What follows `continue`, `break`, `return`, `raise` or `assert False` (`assert(0)`,
                # an author's stop sign in a branch no run should take) in the same block never runs.
                self.facts.dead_blocks.append(tuple(body[index + 1:]))
                break
        if owner is not None:
            self.facts.small_if_bodies[self._blocks] = owner
        arm_of = self._if_bodies.pop(id(node), None)
        if arm_of is not None:
            self.facts.if_bodies[self._blocks] = arm_of

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._blocks += 1
        self._stmt = (self._blocks, 0)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._enter_statement(node)
        switch = self._grad_switch(node) if self._open_blocks else None
        if switch is False and not self.ctx.no_grad:
            self._push(self.ctx.derive(no_grad=True))
            self._open_blocks[-1][0] += 1
        elif switch is True and self._open_blocks[-1][0]:
            self._close_block(keep=True)  # what this block turned off is on again
        if self.ctx.function is None and not self._classes and self.ctx is self._module_ctx:
            if any(type(small) in (cst.Import, cst.ImportFrom) for small in node.body):
                self.facts.module_imports.append(node)

    def visit_Try(self, node: cst.Try) -> None:
        self._enter_statement(node)

    # -- imports ---------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.imports.add_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.add_import_from(node)
        if type(node.names) is cst.ImportStar:
            self.facts.star_import = True

    # -- functions and classes -----------------------------------------------------------
    def _unique_scope(self, name: str) -> str:
        count = self._scope_counts.get(name, 0) + 1
        self._scope_counts[name] = count
        return name if count == 1 else f"{name}@{count}"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._enter_statement(node)
        # A generic base is its class (`flair.nn.Model[TextPair]` is `flair.nn.Model`).
        bases = tuple(self.imports.qualify(v) or dotted_name(v) or "" for v in (
            b.value.value if type(b.value) is cst.Subscript else b.value for b in node.bases))
        info = ClassInfo(node, node.name.value, bases, self._unique_scope(f"class:{node.name.value}"))
        self._classes.append(info)
        self._class_owners.append(self.ctx.function)
        self.facts.classes.setdefault(node.name.value, info)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()
        self._class_owners.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter_statement(node)
        owner = self._classes[-1] if self._classes and self.ctx.function is None else None
        class_name = owner.name if owner is not None else None
        key = f"{class_name}.{node.name.value}" if class_name else node.name.value
        params = node.params
        names = tuple(
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        )
        no_grad = False
        decorators = []
        for decorator in node.decorators:
            expr = decorator.decorator
            if type(expr) is cst.Call:
                expr = expr.func
            qual = self.imports.qualify(expr)
            decorators.append(qual or dotted_name(expr) or "")
            if qual in NO_GRAD_CONTEXTS or _GRAD_OFF_DECORATOR.search(decorators[-1].rsplit(".", 1)[-1]):
                # A project's own wrapper named for what it does (`@smart_inference_mode()`,
                # `@torch_no_grad`) turns autograd off as the one it wraps does.
                no_grad = True
        info = FunctionInfo(
            node=node, key=key, class_name=class_name, params=names, no_grad=no_grad, decorators=tuple(decorators),
            scope=self._unique_scope(key), order=self._next_order(), ctx=self.ctx,
            class_scope=owner.scope if owner is not None else None,
        )
        self.facts.functions.setdefault(key, info)
        self.facts.function_defs.setdefault(key, []).append(info)
        self._pending_functions[id(node)] = info

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        info = self._pending_functions.pop(id(node))
        class_name, class_scope = info.class_name, info.class_scope
        outer = self.ctx
        if class_name is None and outer.class_name is not None and outer.function is not None and "self" not in info.params:
            # A closure inside a method (`def closure():` handed to `LBFGS.step`): its `self` is
            # the method's, so `self.flag` reads the instance's attribute.
            class_name, class_scope = outer.class_name, outer.class_scope
        info.body_ctx = Context(function=info, class_name=class_name, class_scope=class_scope)
        self._push(info.body_ctx)

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self._pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        # A lambda's body runs when it is called, not where it is written.
        self.facts.lambdas.append(node)
        body = node.body
        if type(body) is cst.Call and type(body.func) is cst.Attribute and (
                body.func.attr.value == "cuda"
                or any(type(a.value) is cst.SimpleString and "cuda" in a.value.value for a in body.args)):
            self.facts.uses_cuda = True  # `map(lambda t: t.cuda(), (text, images))`
        return False

    def _comprehension(self, node: cst.CSTNode) -> None:
        self.facts.comprehensions.append(node)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Return(self, node: cst.Return) -> None:
        if self.ctx.function is not None and node.value is not None:
            self.ctx.function.returns.append(node.value)

    def leave_Return(self, original_node: cst.Return) -> None:
        # Numbered after the value's own calls: the value reads what was bound before them.
        if self.ctx.function is not None and original_node.value is not None:
            self.ctx.function.return_sites.append(ReturnSite(original_node.value, self.ctx, self._next_order()))

    def leave_Yield(self, original_node: cst.Yield) -> None:
        function = self.ctx.function
        if function is None:
            return
        function.generator = True
        value = original_node.value
        if type(value) is cst.From:
            function.yields_from.append(ReturnSite(value.item, self.ctx, self._next_order()))
        elif isinstance(value, cst.BaseExpression):
            function.yields.append(ReturnSite(value, self.ctx, self._next_order()))

    # -- loops ---------------------------------------------------------------------------
    def _new_loop(self, node: cst.CSTNode, targets: Tuple[str, ...], over_loader: bool) -> LoopInfo:
        parent = self.ctx.loop
        loop = LoopInfo(
            node=node,
            parent=parent,
            function=self.ctx.function,
            targets=targets,
            ctx=self.ctx,
            over_loader=over_loader,
            start=self._order,
        )
        self.facts.loops.append(loop)
        if parent is not None:
            parent.children.append(loop)
        if self.ctx.function is not None:
            self.ctx.function.loops.append(loop)
        self._pending_loops[id(node)] = loop
        return loop

    def _iterates_loader(self, iterable: cst.BaseExpression, depth: int = 0) -> bool:
        while type(iterable) is cst.Call and type(iterable.func) is cst.Name:
            if iterable.func.value not in _ITER_WRAPPERS or not iterable.args:
                break
            iterable = iterable.args[0].value
        if type(iterable) is cst.Subscript and len(iterable.slice) == 1 and type(iterable.slice[0].slice) is cst.Index:
            # `loaders["test"]`, `self.dataloaders[split]`: one loader of a table of them.
            table = dotted_name(iterable.value)
            return table is not None and _LOADER_TABLE.search(table.rsplit(".", 1)[-1]) is not None
        name = dotted_name(iterable)
        if name is None:
            return False
        if _LOADER_NAME.search(name.rsplit(".", 1)[-1]):
            return True
        for assignment in self.facts.assignments.get((self.ctx.scope, name), ()):
            value = assignment.value
            if type(value) is cst.Call and self.imports.qualify(value.func) == "torch.utils.data.DataLoader":
                return True
            # `epoch_iterator = tqdm(train_dl)`, then `for step, batch in enumerate(epoch_iterator)`
            if (depth == 0 and type(value) is cst.Call and type(value.func) is cst.Name
                    and value.func.value in _ITER_WRAPPERS and assignment.index is None
                    and not _has_enumerate(value)  # `pbar = tqdm(enumerate(loader))`: a count first
                    and self._iterates_loader(value, depth + 1)):
                return True
        return False

    def visit_For(self, node: cst.For) -> None:
        self._enter_statement(node)
        self._binder(node)
        targets = _target_names(node.target)
        over_loader = self._iterates_loader(node.iter)
        is_range = (
            type(node.iter) is cst.Call
            and type(node.iter.func) is cst.Name
            and node.iter.func.value == "range"
        )
        loop = self._new_loop(node, tuple(name for name, _ in targets), over_loader)
        if not is_range:
            loop.batch_names.update(loop.targets)
    def visit_For_body(self, node: cst.For) -> None:
        loop = self._pending_loops[id(node)]
        # Loop targets are recorded as assignments so that rules can ask what a name holds;
        # here, after the iterable's own calls were numbered. Over a loader, unpacked elements
        # (`for x, y in loader`) are tensors; a whole batch (`for batch in loader`) may be a
        # dict of tensors, strings and ids: not known.
        batch_target: Optional[cst.BaseExpression] = node.target
        if _has_enumerate(node.iter):
            if type(node.target) in (cst.Tuple, cst.List) and len(node.target.elements) == 2:
                batch_target = node.target.elements[1].value
            else:
                batch_target = None
        # A loop the walk cannot tell is over a loader keeps, for each target, the hint it would
        # have over one: the model decides (`loaders.loop_target_hint`).
        followable = not loop.over_loader and bool(loop.batch_names)
        pair = node.target.elements if type(node.target) in (cst.Tuple, cst.List) else ()
        enumerable = followable and len(pair) == 2 and not _has_enumerate(node.iter)
        for name, index in _target_names(node.target):
            hint = "loop-target"
            loader_hint = None
            if batch_target is not None:
                unpacked = type(batch_target) in (cst.Tuple, cst.List)
                inside = any(name == n for n, _ in _target_names(batch_target))
                if inside:
                    loader_hint = "batch" if unpacked else "loader-batch"
                else:
                    loader_hint = "index"
            if loop.over_loader and loader_hint is not None:
                hint = loader_hint
            enumerated_hint = None
            if enumerable:
                second = pair[1].value
                enumerated_hint = "index" if index == 0 else (
                    "batch" if type(second) in (cst.Tuple, cst.List) else "loader-batch"
                )
            self._record_assignment(name, None, index, hint, iterable=node.iter,
                                    batch_hint=loader_hint if followable else None,
                                    enumerated_hint=enumerated_hint)
        self._push(self.ctx.derive(loop=loop, in_try=False))

    def leave_For_body(self, node: cst.For) -> None:
        self._pop()

    def leave_For(self, original_node: cst.For) -> None:
        self._pending_loops.pop(id(original_node)).end = self._order

    def visit_For_orelse(self, node: cst.For) -> None:
        self._push(self.ctx.derive(conditional=True))
        self.facts.optional_blocks.add(id(self.ctx))

    def leave_For_orelse(self, node: cst.For) -> None:
        self._pop()

    def visit_While(self, node: cst.While) -> None:
        self._enter_statement(node)
        loop = self._new_loop(node, (), False)
        self.facts.conditions.append(Condition(node.test, self.ctx, "while", loop))

    def visit_Assert(self, node: cst.Assert) -> None:
        self.facts.conditions.append(Condition(node.test, self.ctx, "assert"))
        if node.msg is not None:
            self.facts.assert_messages.append(node.msg)

    def visit_Raise(self, node: cst.Raise) -> None:
        # `raise FloatingPointError(f"loss is {loss}")`: the message is built only when the
        # raise runs, on the failing step, as an assert's message is.
        if node.exc is not None:
            self.facts.assert_messages.append(node.exc)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self.ctx.loop is not None or self.ctx.function is not None:
            self.facts.subscripts.append((node, self.ctx))

    def visit_While_body(self, node: cst.While) -> None:
        self._push(self.ctx.derive(loop=self._pending_loops[id(node)], in_try=False))

    def leave_While_body(self, node: cst.While) -> None:
        self._pop()

    def leave_While(self, original_node: cst.While) -> None:
        self._pending_loops.pop(id(original_node)).end = self._order

    def visit_While_orelse(self, node: cst.While) -> None:
        self._push(self.ctx.derive(conditional=True))
        self.facts.optional_blocks.add(id(self.ctx))

    def leave_While_orelse(self, node: cst.While) -> None:
        self._pop()

    # -- try blocks: each part is a block of its own, so that a binding in one handler is not
    # taken to have run before the statements after the `try`.
    def visit_Try_body(self, node: cst.Try) -> None:
        self._push(self.ctx.derive(in_try=self.ctx.in_try or bool(node.handlers)))
        self._try_bodies.append(self.ctx)
        self._try_nodes.append(node)
        if node.handlers and all(self._handler_leaves(h.body) for h in node.handlers):
            self._sealing[id(node)] = self.ctx

    def leave_Try_body(self, node: cst.Try) -> None:
        self._pop()

    def leave_Try(self, original_node: cst.Try) -> None:
        self._try_bodies.pop()
        self._try_nodes.pop()
        body = self._sealing.pop(id(original_node), None)
        if body is not None:
            self.facts.sealed_tries[id(body)] = self._order

    def _handler_leaves(self, body: cst.BaseSuite) -> bool:
        """An `except` body that never falls through to the statements after its `try`."""
        if _exits_only(body) or _leaves_for_good(body, self.imports) is not None:
            return True
        statements = body.body
        last = statements[-1] if statements else None
        if not type(last) is cst.SimpleStatementLine or not last.body:
            return False
        small = last.body[-1]
        if not type(small) is cst.Expr or not type(small.value) is cst.Call:
            return False
        func = small.value.func
        # click's `ctx.fail(message)` / `ctx.abort()` / `ctx.exit()` raise.
        return (
            type(func) is cst.Attribute and type(func.value) is cst.Name
            and func.value.value == "ctx" and func.attr.value in _CLICK_EXITS
        )

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._push(self.ctx.derive(conditional=True, aborts=self._aborts(node.body)))
        self.facts.optional_blocks.add(id(self.ctx))
        self.facts.handler_tries[id(self.ctx)] = self._try_bodies[-1]
        caught = node.type
        names = [e.value for e in caught.elements] if type(caught) is cst.Tuple else [caught]
        if any(n is not None and dotted_name(n) == "StopIteration" for n in names) or (
            any(n is None or dotted_name(n) in ("Exception", "BaseException") for n in names)
            and _draws_first(self._try_nodes[-1])
        ):
            # An iterator ran out, its loader's pass ended: `except StopIteration:`, or a handler
            # that catches everything around a `next(...)` at the top of the `try`.
            self.facts.handlers[id(self.ctx)] = True
        else:
            self.facts.handlers[id(self.ctx)] = False
            if _recovers_from_failure(names, node.body):
                self.facts.failure_handlers.add(id(self.ctx))

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._pop()

    def visit_Try_orelse(self, node: cst.Try) -> None:
        self._push(self.ctx.derive(conditional=True))
        self.facts.optional_blocks.add(id(self.ctx))

    def leave_Try_orelse(self, node: cst.Try) -> None:
        self._pop()

    def visit_Try_finalbody(self, node: cst.Try) -> None:
        self._push(self.ctx.derive())

    def leave_Try_finalbody(self, node: cst.Try) -> None:
        self._pop()

    def visit_IfExp(self, node: cst.IfExp) -> None:
        # `a if num_fg > 0 else b` tests its condition as an `if` statement does
        self.facts.conditions.append(Condition(node.test, self.ctx, "if"))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._binder(node)
        for clause in node.ifs:  # tested once per item: `[v for v in parts if v > 0]`
            self.facts.conditions.append(Condition(clause.test, self.ctx, "comprehension if"))
        loop = self.ctx.loop
        if loop is None:
            return
        root = root_name(node.iter)
        if root in self._batch_names():
            loop.batch_names.update(name for name, _ in _target_names(node.target))
        draw = self._drawn_source({root})
        if draw is not None:
            for name, _ in _target_names(node.target):
                loop.drawn[name] = draw

    def _batch_names(self) -> Set[str]:
        names: Set[str] = set()
        loop = self.ctx.loop
        while loop is not None:
            names |= loop.batch_names
            loop = loop.parent
        return names

    # -- conditions ------------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._enter_statement(node)
        if self.ctx is self._module_ctx and is_main_test(node.test):
            self.facts.main_blocks.append(node)
        if id(node) in self._stmt_pos:
            # A chain whose every arm is a statement or two (`if device == "mps": ... elif
            # device == "cuda": torch.cuda.synchronize()`) stands where its first `if` stands.
            arms = _small_arms(node)
            for arm in arms:
                self._small_if_bodies[id(arm)] = self._stmt
            for arm in _arms(node):
                self._if_bodies[id(arm)] = self._stmt
        asked = _cuda_test(node.test)
        if asked is not None:
            # Asking is no sign of use: what the branch does is (`.cuda()` there, or a seed only).
            self._cuda_queries.add(id(asked))
        self._if_gates[id(node)] = gate_kinds(node.test)
        self._if_ctx[id(node)] = (self.ctx, self._order)
        self.facts.conditions.append(Condition(node.test, self.ctx, "if"))
        gate = old_torch_arm(node.test, self.imports)
        if gate is not None:
            arm = node.body if gate[0] == "body" else node.orelse
            if arm is not None:
                self.facts.version_gates.append((arm.body if type(arm) is cst.Else else arm, gate[1], gate[2]))
        truth = _constant_truth(node.test)
        if truth is False:
            # `if 0:` / `if False:`: switched off by hand (a one-line `if 0: f()` as a whole).
            self.facts.dead_blocks.append(node.body if type(node.body) is cst.IndentedBlock else node)
        elif truth is True and node.orelse is not None:
            dead = node.orelse.body if type(node.orelse) is cst.Else else node.orelse  # an `elif` statement
            if type(dead) in (cst.IndentedBlock, cst.If):
                self.facts.dead_blocks.append(dead)

    def visit_If_body(self, node: cst.If) -> None:
        modulo, rank = self._if_gates[id(node)]
        ctx = self.ctx
        where, order = self._if_ctx[id(node)]
        self._push(
            ctx.derive(
                gated=ctx.gated or modulo or rank,
                rank_gated=ctx.rank_gated or rank,
                gate_test=node.test if modulo else ctx.gate_test,
                conditional=True,
                guard=Guard(node.test, True, where, order),
                aborts=self._aborts(node.body),
            )
        )

    def _aborts(self, body: cst.BaseSuite) -> tuple:
        """The context's aborts, with this block's if it ends by leaving for good."""
        kind = _leaves_for_good(body, self.imports)
        if kind is None:
            return self.ctx.aborts
        return (*self.ctx.aborts, Abort(kind, self.ctx.loop, self.ctx.in_try))

    def leave_If_body(self, node: cst.If) -> None:
        self._pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        where, order = self._if_ctx[id(node)]
        orelse = node.orelse
        aborts = self._aborts(orelse.body) if type(orelse) is cst.Else else self.ctx.aborts
        self._push(self.ctx.derive(conditional=True, guard=Guard(node.test, False, where, order), aborts=aborts))

    def leave_If_orelse(self, node: cst.If) -> None:
        self._pop()

    def leave_If(self, original_node: cst.If) -> None:
        where, order = self._if_ctx.pop(id(original_node))
        gates = any(self._if_gates.pop(id(original_node), (False, False)))
        if original_node.orelse is None and _exits_only(original_node.body):
            # `if step % k != 0: continue` (or `return` at the top of a helper) gates every
            # later statement of the block: they run only when the test is false.
            guard = Guard(original_node.test, False, where, order, exits=True)
            gated = gates and _is_continue_only(original_node.body)
            self.ctx = self.ctx.derive(gated=self.ctx.gated or gated, guard=guard)

    # -- with blocks -------------------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        self._enter_statement(node)
        no_grad = False
        calls = []
        for item in node.items:
            call = item.item
            if type(call) is cst.BooleanOperation and type(call.operator) is cst.And:
                # `with torch.no_grad() and torch.inference_mode():` enters the last operand
                # (the first is truthy): inference mode, no autograd either way.
                operands = (call.left, call.right)
                if all(type(o) is cst.Call and self.imports.qualify(o.func) in NO_GRAD_CONTEXTS for o in operands):
                    no_grad = True
                continue
            if not type(call) is cst.Call:
                if self.imports.qualify(call) in NO_GRAD_CONTEXTS:
                    no_grad = True
                continue
            calls.append(call)
            if item.asname is not None and type(item.asname.name) is cst.Name:
                key = (self.ctx.scope, item.asname.name.value)
                self.facts.with_targets.setdefault(key, []).append(call)
            qual = self.imports.qualify(call.func)
            if qual in NO_GRAD_CONTEXTS or self._returns_no_grad(call.func):
                no_grad = True
            elif qual == "torch.set_grad_enabled" and call.args:
                value = call.args[0].value
                if type(value) is cst.Name and value.value == "False":
                    no_grad = True
        self._with_flags[id(node)] = no_grad
        for call in calls:
            self._with_items[id(call)] = no_grad
            self._with_of_call[id(call)] = id(node)

    def _returns_no_grad(self, func: cst.BaseExpression) -> bool:
        """`with _get_no_grad_ctx_mgr():`, a function of the file (defined above) that hands
        back `torch.no_grad()` (on the torch versions it supports; an older one's no-op aside)."""
        if type(func) is not cst.Name:
            return False
        info = self.facts.functions.get(func.value)
        return info is not None and any(
            type(site.value) is cst.Call and self.imports.qualify(site.value.func) in NO_GRAD_CONTEXTS
            for site in info.return_sites
        )

    def visit_With_body(self, node: cst.With) -> None:
        no_grad = self._with_flags.pop(id(node), False)
        self._push(self.ctx.derive(no_grad=self.ctx.no_grad or no_grad))
        self._autocast_stack.extend(self._autocasts_of_with.get(id(node), ()))
        if not any(self._suppresses(item.item) for item in node.items):
            self._sealing[id(node)] = self.ctx

    def leave_With(self, original_node: cst.With) -> None:
        # What follows a `with` runs only once its body ran to the end (unless the context
        # manager swallows exceptions: `contextlib.suppress`, left out).
        body = self._sealing.pop(id(original_node), None)
        if body is not None:
            self.facts.sealed_tries[id(body)] = self._order

    def _suppresses(self, item: cst.BaseExpression) -> bool:
        func = item.func if type(item) is cst.Call else item
        name = self.imports.qualify(func) or dotted_name(func) or ""
        return name.rsplit(".", 1)[-1] == "suppress"

    def leave_With_body(self, node: cst.With) -> None:
        self._pop()
        for _ in self._autocasts_of_with.pop(id(node), ()):
            self._autocast_stack.pop()

    # -- assignments -------------------------------------------------------------------------
    def _record_assignment(
        self,
        target: str,
        value: Optional[cst.BaseExpression],
        index: Optional[int] = None,
        kind_hint: Optional[str] = None,
        statement: Optional[cst.CSTNode] = None,
        iterable: Optional[cst.BaseExpression] = None,
        batch_hint: Optional[str] = None,
        enumerated_hint: Optional[str] = None,
    ) -> None:
        scope = self.ctx.scope
        if target.startswith("self.") and self.ctx.class_scope:
            scope = self.ctx.class_scope
        assignment = Assignment(
            target, value, self.ctx, self._next_order(), index, kind_hint,
            augmented=type(statement) is cst.AugAssign, statement=statement, iterable=iterable,
            batch_hint=batch_hint, enumerated_hint=enumerated_hint,
        )
        self.facts.assignments.setdefault((scope, target), []).append(assignment)

    def _record_buffer(self, node: cst.Call) -> None:
        """`self.register_buffer("ptr", torch.zeros(1))` binds `self.ptr` as an assignment
        would: a module's buffers are tensors that live where the module does."""
        args = node.args
        if len(args) < 2 or args[0].keyword is not None or not type(args[0].value) is cst.SimpleString:
            return
        name = args[0].value.evaluated_value
        value = args[1].value if args[1].keyword is None or args[1].keyword.value == "tensor" else None
        if isinstance(name, str) and name.isidentifier() and value is not None:
            self.facts.buffer_values.add(id(value))
            self._record_assignment(f"self.{name}", value)

    def _record_targets(
        self, target: cst.BaseExpression, value: cst.BaseExpression, statement: cst.CSTNode
    ) -> Optional[str]:
        """Records the names a target binds; returns the base name that the value flows into."""
        if type(target) is cst.Subscript:
            base = dotted_name(target.value)
            root = target.value
            while type(root) is cst.Subscript:
                root = root.value  # `buf[i][:n] = row` writes into `buf` too
            if dotted_name(root) is not None:
                record = self.facts.subscript_stores.setdefault((self.ctx.scope, dotted_name(root)), [self._order, set(), True])
                if self.ctx.loop is not None:
                    record[1].add(id(self.ctx.loop))
                if record[2] and (type(statement) is cst.AugAssign or not _number(value) or not _fixed_place(target)):
                    record[2] = False
            if base is not None:
                # `d[k] += v`: what the item then holds is not `v`.
                self._record_item_store(base, target, cst.Ellipsis() if type(statement) is cst.AugAssign else value)
            return base
        names = _target_names(target)
        for name, index in names:
            self._record_assignment(name, value, index, statement=statement)
        if id(value) in self._timing_event_calls:
            self._timing_events.update(name for name, _ in names)
        loop = self.ctx.loop
        if loop is not None and names:
            sources = {root_name(value)}
            if type(value) is cst.Call:
                sources.update(root_name(arg.value) for arg in value.args)
            elif type(value) is cst.Tuple:
                sources.update(root_name(el.value) for el in value.elements)
            if sources & self._batch_names():
                loop.batch_names.update(name for name, _ in names)
            draw = _next_call(value) if type(value) is cst.Call else None
            if draw is None:
                draw = self._drawn_source(sources)
            if draw is not None:
                for name, _ in names:
                    loop.drawn[name] = draw
        return names[0][0] if len(names) == 1 else None

    def _drawn_source(self, sources: Set[Optional[str]]) -> Optional[cst.Call]:
        """The `next(...)` call that one of these names was bound from, in the loops around."""
        loop = self.ctx.loop
        while loop is not None:
            for source in sources:
                if source is not None and source in loop.drawn:
                    return loop.drawn[source]
            loop = loop.parent
        return None

    def _record_item_store(self, base: str, target: cst.Subscript, value: Optional[cst.BaseExpression]) -> None:
        key = target.slice[0].slice if len(target.slice) == 1 else None
        key = key.value if type(key) is cst.Index and key.star is None else cst.Ellipsis()  # `...`: a key not known
        store = ItemStore(key, value, self.ctx, self._next_order())
        self.facts.item_stores.setdefault(base, []).append(store)

    def leave_Del(self, original_node: cst.Del) -> None:
        targets = original_node.target.elements if type(original_node.target) is cst.Tuple else ()
        for target in [e.value for e in targets] or [original_node.target]:
            if type(target) is cst.Subscript:
                base = dotted_name(target.value)
                if base is not None:
                    self._record_item_store(base, target, None)

    # Assignments are recorded when they are left, numbered after the calls of their value:
    # `x = f(x)` reads the `x` bound before it, not itself.
    @staticmethod
    def _base_of(target: cst.BaseExpression) -> Optional[str]:
        """The base name a target's value flows into (`x` in `x = ...`, `d` in `d[k] = ...`)."""
        if type(target) is cst.Subscript:
            return dotted_name(target.value)
        names = _target_names(target)
        return names[0][0] if len(names) == 1 else None

    def _binder(self, node: cst.CSTNode) -> None:
        function = self.ctx.function
        # A class body inside the function binds its own names, not the function's.
        if function is not None and not (self._class_owners and self._class_owners[-1] is function):
            function.binders.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._binder(node)
        base = None
        for target in node.targets:
            base = self._base_of(target.target) or base
        self._assign_base.append(base)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        for target in original_node.targets:
            self._record_targets(target.target, original_node.value, original_node)
        self._assign_base.pop()

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._assign_base.append(self._base_of(node.target) if node.value is not None else None)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        if original_node.value is not None:
            self._record_targets(original_node.target, original_node.value, original_node)
        self._assign_base.pop()

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        # `if (mask := batch.get("mask")) is not None:` binds `mask` as an assignment would.
        if type(original_node.target) is cst.Name:
            self._record_assignment(original_node.target.value, original_node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._assign_base.append(self._base_of(node.target))

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        self._record_targets(original_node.target, original_node.value, original_node)
        self._assign_base.pop()

    # -- text formatting -------------------------------------------------------------------
    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self.facts.formatted.append(
            FormattedValue(node.expression, self.ctx, "f-string", node.format_spec is not None)
        )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Modulo and _is_template(node.left):
            values = node.right.elements if type(node.right) is cst.Tuple else None
            if values is None:
                self.facts.formatted.append(FormattedValue(node.right, self.ctx, "%-format"))
            else:
                for element in values:
                    self.facts.formatted.append(FormattedValue(element.value, self.ctx, "%-format"))

    # -- CUDA evidence ---------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = node.attr.value
        if name == "cuda":
            if id(node) not in self._cuda_queries:
                self.facts.uses_cuda = True
        elif name in _CUDA_QUERIES and type(node.value) is cst.Attribute and node.value.attr.value == "cuda":
            # `torch.cuda.manual_seed_all(seed)`, `torch.cuda.is_available()`: seeding or asking
            # places nothing on the GPU (the inner `torch.cuda` is visited next).
            self._cuda_queries.add(id(node.value))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if "cuda" in node.value:
            self.facts.uses_cuda = True

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        if "cuda" in node.value:  # f"cuda:{local_rank}"
            self.facts.uses_cuda = True

    # -- calls -------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        ctx = self.ctx
        qualname = self.imports.qualify(func)
        method = receiver = receiver_name = None
        if type(func) is cst.Attribute:
            method = func.attr.value
            receiver = func.value
            receiver_name = dotted_name(receiver)
        site = CallSite(
            node=node,
            ctx=ctx,
            qualname=qualname,
            method=method,
            receiver=receiver,
            receiver_name=receiver_name,
            outer=self._calls[-1] if self._calls else None,
            assigned_to=self._assign_base[-1],
            stmt=self._stmt,
            order=self._next_order(),
            with_item=id(node) in self._with_of_call,
        )
        self._calls.append(site)
        facts = self.facts
        facts.calls.append(site)
        if ctx.function is not None:
            ctx.function.sites.append(site)
        loop = ctx.loop
        while loop is not None:
            loop.sites.append(site)
            loop = loop.parent
        if method is not None:
            facts.calls_by_method.setdefault(method, []).append(site)
            if method == "register_buffer" and receiver_name == "self":
                self._record_buffer(node)
        if qualname is not None:
            facts.calls_by_qualname.setdefault(qualname, []).append(site)
            if qualname in TIMING_FUNCTIONS or (qualname in _TIMING_EVENTS and _times(node)):
                # `torch.cuda.Event(enable_timing=True)`: an event made to time what follows.
                facts.timing_statements.setdefault(self._stmt[0], set()).add(self._stmt[1])
                self._timing_event_calls.add(id(node))
            elif qualname == "torch.save" and ctx.function is not None:
                ctx.function.calls_save = True
            elif qualname in AUTOCAST_NAMES and id(node) in self._with_items:
                autocast = AutocastSite(site, ctx, self._with_items[id(node)] or ctx.no_grad)
                facts.autocasts.append(autocast)
                self._autocasts_of_with.setdefault(self._with_of_call[id(node)], []).append(autocast)
            elif qualname == "torch.autograd.backward":
                self._mark_training(ctx)
            elif qualname in ACCELERATOR_DEVICE_CALLS and not _only_printed(site):
                self.facts.uses_cuda = True  # `torch.accelerator.current_accelerator()`: CUDA on a GPU box

        callee = None
        if type(func) is cst.Name and qualname is None:
            callee = func.value
        elif receiver_name in ("self", "cls") and ctx.class_name:
            callee = f"{ctx.class_name}.{method}"
        elif method is not None and qualname is None:
            callee = f".{method}"  # `trainer.train_step(batch)`: resolved to a method of this file, if unique
        for site_ in self._autocast_stack:
            if callee is not None:
                site_.callees.add(callee)
        if callee is not None:
            facts.calls_by_callee.setdefault(callee, []).append(site)
            if ctx.function is not None:
                ctx.function.callees.add(callee)
            loop = ctx.loop
            while loop is not None:
                loop.callees.add(callee)
                loop = loop.parent

        if method == "backward":
            self._mark_training(ctx)
            self._record_backward_value(ctx, receiver, node)
            if node.args and receiver_name is not None:
                self._engines.add((ctx.scope, receiver_name))
        elif method == "step" and receiver_name is not None:
            last = receiver_name.rsplit(".", 1)[-1]
            if "sched" not in last.lower() and (_OPTIMIZER_NAME.search(last) or _SCALER_NAME.search(last)):
                self._mark_training(ctx, step=True)
            elif (ctx.scope, receiver_name) in self._engines:
                self._mark_training(ctx, step=True)  # `engine.backward(loss)` ... `engine.step()` (DeepSpeed)
            elif _ENV_NAME.search(last) and ctx.loop is not None:
                ctx.loop.env_step = True
            elif "sched" not in last.lower():
                self._mark_loose_step(ctx)
        elif (method == "step" and type(receiver) is cst.Subscript
              and _OPTIMIZER_NAME.search(_held_name(receiver))):
            # `optimizers[optimizer_idx].step()`: one optimizer of a list (a GAN's pair); or
            # `model_dict['optimizer'].step()`, an optimizer a setup helper returns in a dict.
            self._mark_training(ctx, step=True)
        elif (method in ("first_step", "second_step") and receiver_name is not None
              and _OPTIMIZER_NAME.search(receiver_name.rsplit(".", 1)[-1])):
            # SAM's two half-steps (`optimizer.first_step(zero_grad=True)`, then `second_step`):
            # each updates the weights, once per batch.
            self._mark_training(ctx, step=True)
        elif qualname is None and _scaler_steps(func, node):
            # `loss_scaler(loss, optimizer, parameters=model.parameters())` (timm's NativeScaler and
            # the copies projects keep): a callable that runs backward and steps the optimizer.
            self._mark_training(ctx, step=True)
            self._record_backward_value(ctx, None, node)
        elif ((method or (func.value if type(func) is cst.Name else "")).endswith("_step")
              and (method or func.value) not in _NOT_OPTIMIZER_STEPS):
            self._mark_loose_step(ctx)
        elif method == "set_epoch":
            if ctx.function is not None:
                ctx.function.set_epoch = True
            loop = ctx.loop
            while loop is not None:
                loop.set_epoch = True
                loop = loop.parent
        elif (method == "elapsed_time" or (method is not None and TIMER_METHOD.search(method))
              or (method == "record" and receiver_name in self._timing_events)):
            facts.timing_statements.setdefault(self._stmt[0], set()).add(self._stmt[1])

    def leave_Call(self, original_node: cst.Call) -> None:
        self._calls.pop()

    def _record_backward_value(self, ctx: Context, receiver, node: cst.Call) -> None:
        """The value backpropagated is a tensor: `loss.backward()`, `scaler.scale(loss).backward()`,
        `accelerator.backward(loss)`."""
        value = receiver
        if node.args and node.args[0].keyword is None:
            value = node.args[0].value  # accelerator.backward(loss), fabric.backward(loss)
        elif type(receiver) is cst.Call and type(receiver.func) is cst.Attribute:
            if receiver.func.attr.value == "scale" and receiver.args:
                value = receiver.args[0].value
        if type(value) is cst.Name:
            self.facts.backward_receivers.add((ctx.scope, value.value))

    def _mark_loose_step(self, ctx: Context) -> None:
        """`engine.step()`, `self.optimizer_step(...)`: maybe an update, through code not seen."""
        if ctx.function is not None:
            ctx.function.loose_step = True
        loop = ctx.loop
        while loop is not None:
            loop.loose_step = True
            loop = loop.parent

    def _mark_training(self, ctx: Context, step: bool = False) -> None:
        for site in self._autocast_stack:
            site.body_trains = True
            site.body_steps = site.body_steps or step
        if step:
            current: Optional[Context] = ctx
            while current is not None:
                if current.guard is not None:
                    current.guard.steps = True
                current = current.outer
        if step and ctx.loop is not None:
            ctx.loop.own_step = True
            ctx.loop.step_contexts.append(ctx)
        if ctx.function is not None:
            ctx.function.direct_marker = True
            ctx.function.direct_step = ctx.function.direct_step or step
            if step:
                ctx.function.step_loops.append(ctx.loop)
                ctx.function.step_contexts.append(ctx)
        loop = ctx.loop
        while loop is not None:
            loop.direct_marker = True
            loop.has_step = loop.has_step or step
            loop = loop.parent


def _scaler_steps(func: cst.BaseExpression, node: cst.Call) -> bool:
    """A scaler object called with the loss first and an optimizer among its arguments."""
    name = dotted_name(func)
    if name is None or not _SCALER_NAME.search(name.rsplit(".", 1)[-1]):
        return False
    if not node.args or node.args[0].keyword is not None or node.args[0].star:
        return False
    return any(
        _OPTIMIZER_NAME.search((dotted_name(a.value) or "").rsplit(".", 1)[-1]) for a in node.args[1:] if not a.star
    )


def _held_name(receiver: cst.Subscript) -> str:
    """What names the item of `optimizers[i]` (the container's last name part) or of
    `parts["optimizer_D"]` (the string key; `self.optimizers["policy"]`, a dict of optimizers by
    network, is named by its container): "" when neither says."""
    container = (dotted_name(receiver.value) or "").rsplit(".", 1)[-1]
    index = receiver.slice[0].slice if len(receiver.slice) == 1 else None
    if type(index) is cst.Index and type(index.value) is cst.SimpleString:
        key = index.value.evaluated_value
        if isinstance(key, str) and "sched" in key.lower():
            return ""
        if isinstance(key, str) and not _OPTIMIZER_NAME.search(container):
            return key
    return container


def _only_printed(site: CallSite) -> bool:
    """The call's value goes to a print or a log line only (`print(torch.accelerator.current_accelerator())`)."""
    outer = site.outer
    while outer is not None:
        func = outer.node.func
        name = func.value if type(func) is cst.Name else outer.method
        if name in _REPORTING_CALLS:
            return True
        outer = outer.outer
    return False


def _is_template(expr: cst.BaseExpression) -> bool:
    """A %-format template: a string literal, or one built from literals with `+` and `*`, as
    progress-bar code builds its column layout (`('%10s' * 2 + '%10.4g' * 6) % (...)`)."""
    if type(expr) in (cst.SimpleString, cst.ConcatenatedString):
        return True
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) is cst.Add:
            return _is_template(expr.left) and _is_template(expr.right)
        if type(expr.operator) is cst.Multiply:
            return _is_template(expr.left) or _is_template(expr.right)
    return False


def _arms(node: cst.If) -> List[cst.IndentedBlock]:
    """The bodies of an `if`/`elif`/`else` chain."""
    arms: List[cst.IndentedBlock] = []
    current: Optional[cst.CSTNode] = node
    while current is not None:
        if type(current.body) is cst.IndentedBlock:
            arms.append(current.body)
        current = current.orelse if type(current) is cst.If else None
    return arms


def _small_arms(node: cst.If) -> List[cst.IndentedBlock]:
    """The bodies of an `if`/`elif`/`else` chain when each holds at most two statements; none
    when one holds more."""
    arms: List[cst.IndentedBlock] = []
    current: Optional[cst.CSTNode] = node
    while current is not None:
        body = current.body
        if type(body) is not cst.IndentedBlock or len(body.body) > 2:
            return []
        arms.append(body)
        current = current.orelse if type(current) is cst.If else None
    return arms


def _number(value: cst.BaseExpression) -> bool:
    """A number written in the code (`4`, `-1.0`): what a store of it writes is no host data."""
    if type(value) is cst.UnaryOperation and type(value.operator) is cst.Minus:
        value = value.expression
    return type(value) in (cst.Integer, cst.Float)


def _fixed_place(target: cst.Subscript) -> bool:
    """`attr[:, 0]`: a place written in the code (numbers, whole slices), not one computed from
    data (`mask[b][gj][gi]`, whose indices the host read from the targets)."""
    node: cst.BaseExpression = target
    while type(node) is cst.Subscript:
        for element in node.slice:
            part = element.slice
            if type(part) is cst.Index:
                if not _number(part.value):
                    return False
            elif type(part) is cst.Slice:
                if any(bound is not None and not _number(bound) for bound in (part.lower, part.upper, part.step)):
                    return False
            else:
                return False
        node = node.value
    return True
