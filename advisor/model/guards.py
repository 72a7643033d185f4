"""Which guards a statement runs under, and whether they make it periodic or rank-0 only.

The walk records each `if` a block runs under (`Guard`, on the block's context). Whether one is a
periodic (`step % N == 0`) or rank-0 (`rank == 0`, `accelerator.is_main_process`) gate is
decided here, with the whole program in view:

- a gate held in a variable or an attribute: `should_log = step % N == 0` then `if should_log:`;
  `args.save_logs = args.logs and is_master(args)`;
- a gate computed by a helper, in this file or another of the project: `if divisible_by(i, k):`;
- an early exit: `if not should_log: return` at the top of a logging helper, or
  `if step % k != 0: continue`, gates the rest of the block;
- the `else` of a gate runs on the other steps, so it is not gated;
- a periodic test an optimizer steps under is the accumulation boundary: it runs on every
  optimizer step, so it gates nothing; unless the loop also steps outside it (a GAN's lazy
  regulariser steps again every few iterations): then it is a periodic gate;
- `rank in (-1, 0)` holds on every process of a single-GPU run (rank -1), so it gates nothing
  for the per-step costs.

A block that ends by leaving for good (`sys.exit(1)`, a `break` of the training loop, a `raise`
nothing in the loop catches) runs at most once: it is no per-step code at all (`runs_once`).
"""

from __future__ import annotations

import dataclasses

import os
import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from advisor.model.attention_backends import flash_attention_unasked
from advisor.model.builder import gate_kinds, string_key
from advisor.model.cli_options import defined_options
from advisor.model.facts import Context, Guard, LoopInfo
from advisor.model.config_nodes import left_off
from advisor.model.constants import constant
from advisor.model.default_flags import keeps_false_default, module_setting_off, never_given_true
from advisor.model.launched_options import never_launched
from advisor.model.launch_modes import every_run_several_processes
from advisor.model.passed_configs import passed_config_values
from advisor.model.named_methods import project_methods_named
from advisor.model.environment import is_environment_setting
from advisor.model.literals import literal_values
from advisor.model.names import dotted_name
from advisor.model.occasional_tests import occasional
from advisor.model.subtree import node_ids
from advisor.model.value_flow import SPAWNERS
from advisor.model.value_flow import argument, parameter_default
from advisor.model.walk import children

_MAX_DEPTH = 3


def guards_of(ctx: Context) -> List[Guard]:
    """The guards around a context, innermost first."""
    out: List[Guard] = []
    current: Optional[Context] = ctx
    while current is not None:
        if current.guard is not None and (not out or current.guard is not out[-1]):
            out.append(current.guard)
        current = current.outer
    return out


# Switches that turn on debugging, visual output or a test mode: off in a training run unless asked for.
_DEBUG_NAME = re.compile(
    r"^(debug|debugging|verbose|vis|visual|visualize|visualise|visualization|show_images|plot_images|test|test_only|eval_only"
    r"|(use_)?visdom(_\w+)?)$",
    re.IGNORECASE,
)


# A flag named for keeping tensors in host memory: `cpu_cache`, `offload`, `keep_on_cpu`.
_OFFLOAD_SWITCH = re.compile(r"(^|_)(cpu|offload)(_|$)|offload", re.IGNORECASE)


def _asks_for_cpu(test: cst.BaseExpression) -> bool:
    """`mode == "cpu"`, `device == 'cpu'`: the arm a caller picks to do the work in host memory
    (YOLOX's label assignment retried on the CPU after running out of GPU memory)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    if type(test.comparisons[0].operator) is not cst.Equal:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    return any(type(side) is cst.SimpleString and side.evaluated_value == "cpu" for side in sides)


def _debug_switch(test: cst.BaseExpression) -> bool:
    """`opt.debug`, `args.vis`, `cfg.DEBUG`, or such a switch compared above zero."""
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if type(target.operator) in (cst.GreaterThan, cst.GreaterThanEqual, cst.NotEqual) and type(target.comparator) is cst.Integer:
            test = test.left
        else:
            return False
    name = dotted_name(test)
    return name is not None and bool(_DEBUG_NAME.match(name.rsplit(".", 1)[-1]))


_STRINGS = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
_DEBUG_MODES = frozenset({"torch.is_anomaly_enabled", "torch.autograd.anomaly_mode.is_anomaly_enabled"})


_MAX_WAYS = 32


def _returns_within(statement: cst.CSTNode) -> bool:
    """Some `return` sits in the statement (not in a nested function; a `raise` is an error's
    way out, not a schedule's)."""
    stack = list(children(statement))
    while stack:
        node = stack.pop()
        if type(node) is cst.Return:
            return True
        if type(node) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(children(node))
    return False


def _ways_through(statements, depth: int) -> Optional[List[List[Tuple[cst.BaseExpression, bool]]]]:
    """The ways through a block of statements to what follows it, each as the `if` tests it
    passes with their outcomes; [] when none gets through (every way returns), None when there
    are too many ways or the block is too deep to follow. Loops, `with` and `try` blocks are
    passed through as they stand."""
    if depth > 4:
        return None
    ways: List[List[Tuple[cst.BaseExpression, bool]]] = [[]]
    for statement in statements:
        if type(statement) in (cst.Return, cst.Raise):
            return []  # a small statement of a one-line suite (`if x: return`)
        if type(statement) is cst.SimpleStatementLine:
            if any(type(small) in (cst.Return, cst.Raise) for small in statement.body):
                return []
            continue
        if type(statement) is not cst.If:
            continue
        arms = _ways_through(statement.body.body, depth + 1)
        orelse = statement.orelse
        if orelse is None:
            others: Optional[List[List[Tuple[cst.BaseExpression, bool]]]] = [[]]
        elif type(orelse) is cst.Else:
            others = _ways_through(orelse.body.body, depth + 1)
        else:
            others = _ways_through([orelse], depth + 1)
        if arms is None or others is None:
            return None
        branches = [[(statement.test, True)] + way for way in arms] + [[(statement.test, False)] + way for way in others]
        ways = [way + branch for way in ways for branch in branches]
        if len(ways) > _MAX_WAYS:
            return None
    return ways


def _disjuncts(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The operands of a chain of `or` (`a or b or c`), unwrapped of parentheses."""
    out: List[cst.BaseExpression] = []
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.BooleanOperation and type(node.operator) is cst.Or:
            stack.extend((node.right, node.left))
        else:
            out.append(node)
    return out


def conjuncts(test: cst.BaseExpression):
    """The parts of `a and b and c` (the test itself otherwise): each must hold for it to."""
    stack, out = [test], []
    while stack:
        node = stack.pop()
        if type(node) is cst.BooleanOperation and type(node.operator) is cst.And:
            stack.extend((node.left, node.right))
        else:
            out.append(node)
    return out


def _false_constant(expr: cst.BaseExpression) -> bool:
    """`False`, `None` or `0`."""
    if type(expr) is cst.Name:
        return expr.value in ("False", "None")
    return type(expr) is cst.Integer and expr.value == "0"


def on_cpu_path(model, ctx: Context) -> bool:
    """The context runs only when there is no GPU: in the `else` of `if torch.cuda.is_available():`,
    in the body of `if not use_cuda:`, after `if use_cuda: return` (``cuda_tests``)."""
    from advisor.model.cuda_tests import cuda_test

    for guard in guards_of(ctx):
        gpu = cuda_test(model, guard.test)
        if gpu is None:
            continue
        runs_when = guard.positive and not guard.exits
        if gpu is not runs_when:
            return True
    return False


def in_cpu_arm(model, node: cst.CSTNode) -> bool:
    """``node`` sits in the arm of a conditional expression that runs only off the GPU path
    (`x.cuda() if mask.is_cuda else x.cpu()`: the `.cpu()` runs when the data is already in host
    memory), the expression-level twin of `on_cpu_path`."""
    statement = model.statement_of.get(id(node))
    if statement is None:
        return False
    arms: Dict[int, Set[int]] = model.shared("cpu-arms", lambda m: {})
    inside = arms.get(id(statement))
    if inside is None:
        inside = arms[id(statement)] = _cpu_arm_nodes(model, statement)
    return id(node) in inside


def _cpu_arm_nodes(model, statement: cst.CSTNode) -> Set[int]:
    """The ids of the nodes in the arms of the statement's conditional expressions that run
    off the GPU path: one walk per statement, however many copies it holds."""
    from advisor.model.cuda_tests import cuda_test

    out: Set[int] = set()
    stack: List[cst.CSTNode] = [statement]
    while stack:
        current = stack.pop()
        if type(current) is cst.IfExp:
            gpu = cuda_test(model, current.test)
            if gpu is not None:
                out |= node_ids(current.orelse if gpu else current.body)
        stack.extend(children(current))
    return out


def runs_once(ctx: Context, loop: Optional[LoopInfo]) -> bool:
    """The context is in a block that ends by leaving for good, so it runs at most once per run
    of ``loop`` (the training loop around it, None in a helper), not every step: one that exits
    the process (`if not math.isfinite(loss): print(...); sys.exit(1)`), or, directly in the
    loop's body, one that breaks out of it or raises where no `try` of the loop's body catches,
    or one in the loop (or a loop nested in it) that returns from the function holding it (`if
    step >= max_steps: save(...); return`). A `raise` in a helper may be caught by its caller,
    a helper's `return` comes back with its next call, and a `break` of an inner loop comes
    back on the next step: none counts."""
    for abort in ctx.aborts:
        if abort.kind == "exit":
            return True
        if loop is None:
            continue
        if abort.kind == "return":
            if abort.loop is not None and abort.loop.within(loop):
                return True
        elif abort.loop is loop and (abort.kind == "break" or not abort.caught):
            return True
    return False


def at_most_one_round(model, loop: Optional[LoopInfo]) -> bool:
    """`for epoch in range(args.epochs):` whose count is 0 or 1 on every path a run as shipped
    takes: a literal, or an option whose default and every shipped or documented command give
    at most 1 (`--epochs` defaulting to 1). Its body runs once: nothing is reused between
    rounds. `range(start, stop)` counts when its start is a literal."""
    if loop is None or type(loop.node) is not cst.For or type(loop.node.iter) is not cst.Call:
        return False
    call = loop.node.iter
    if type(call.func) is not cst.Name or call.func.value != "range" or model.imports.qualify(call.func) is not None:
        return False
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if len(args) != len(call.args) or len(args) not in (1, 2):
        return False
    start = 0
    stop = args[-1]
    if len(args) == 2:
        if type(args[0]) is not cst.Integer:
            return False
        start = int(args[0].evaluated_value)
        if (type(stop) is cst.BinaryOperation and type(stop.operator) is cst.Add
                and type(stop.right) is cst.Integer):
            # `range(1, epochs + 1)`: as many rounds as `epochs` says
            start -= int(stop.right.evaluated_value)
            stop = stop.left
    order = model.order_of(call)
    found = literal_values(model, stop, loop.ctx, order)
    counts = found.ints()
    if counts is None or max(counts) - start > 1:
        return False
    if found.option is not None and model.project is not None and model.project.layout.launch_texts() is None:
        return False  # too many launch scripts to read: one of them may well ask for more rounds
    return True


def single_pass(model, loop: Optional[LoopInfo]) -> bool:
    """The loop's body ends with a `break` that nothing skips (no `continue` of this loop): it
    runs once (`for batch in loader: ...; break`, a data-dependent initialisation)."""
    if loop is None:
        return False
    return id(loop) in model.shared("single-pass-loops", _single_pass_loops)


def _single_pass_loops(model) -> Set[int]:
    out: Set[int] = set()
    for loop in model.facts.loops:
        body = getattr(loop.node, "body", None)
        statements = getattr(body, "body", ())
        if not statements or type(statements[-1]) is not cst.SimpleStatementLine:
            continue
        if not statements[-1].body or type(statements[-1].body[-1]) is not cst.Break:
            continue
        if not _continues(statements):
            out.add(id(loop))
    return out


def _continues(statements) -> bool:
    """A `continue` of the loop these statements are the body of (not of a nested loop)."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        if type(node) is cst.Continue:
            return True
        if type(node) in (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda):
            if type(node) in (cst.For, cst.While) and node.orelse is not None:
                stack.append(node.orelse)
            continue
        stack.extend(children(node))
    return False


def every_call_path(model, info, holds, depth: int = _MAX_DEPTH, skip=None) -> bool:
    """Every path of calls in the file that runs the function ``info`` passes a call for which
    ``holds(model, ctx, node)``, within ``depth`` calls up: `_save_snapshot` called only under
    `if self.local_rank == 0:` guards the `upload(...)` it calls, and the `torch.save` in that.
    False when a path ends in a function no call of the file runs (nothing known of its guard),
    or goes deeper than ``depth`` or round a cycle. ``skip(site)``: calls of ``info`` itself that
    never reach the code in question (they pass a flag that takes another branch)."""
    return _every_call_path(model, info, holds, depth, set(), skip)


def _every_call_path(model, info, holds, depth: int, seen: set, skip=None) -> bool:
    callers = model.call_sites(info)
    if skip is not None:
        kept = [site for site in callers if not skip(site)]
        if callers and not kept:
            return True  # no call reaches it
        callers = kept
    if not callers or depth <= 0 or id(info) in seen or _spawned(model, info):
        return False
    seen = seen | {id(info)}
    for site in callers:
        if holds(model, site.ctx, site.node):
            continue
        outer = site.ctx.function
        if outer is None or not _every_call_path(model, outer, holds, depth - 1, seen):
            return False
    return True


def _spawned(model, info) -> bool:
    """`mp.spawn(main_worker, ...)` runs the function in every process, with no guard the file
    can see (a direct call of it elsewhere, `else: main_worker(0, 1, args)`, is not its only
    path)."""
    if info.class_name is not None:
        return False
    name = info.node.name.value
    return any(site.node.args and site.node.args[0].keyword is None and type(site.node.args[0].value) is cst.Name
               and site.node.args[0].value.value == name for site in model.calls_to(*SPAWNERS))


def _spawned_index_test(model, test: cst.BaseExpression, ctx: Context) -> bool:
    """`gpu == 0` in `def train(gpu, opt, ...)` that `mp.spawn(train, ...)` runs: the process
    index `spawn` passes first is the rank of the process on its machine."""
    info = ctx.function
    if info is None or type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    part = test.comparisons[0]
    if type(part.operator) is not cst.Equal or type(part.comparator) is not cst.Integer or part.comparator.value != "0":
        return False
    positional = [p.name.value for p in (*info.node.params.posonly_params, *info.node.params.params)]
    if not positional or type(test.left) is not cst.Name or test.left.value != positional[0]:
        return False
    reach = model.bindings.reaching(positional[0], ctx, model.order_of(test))
    return not reach.assignments and _spawned(model, info)


def _single_gpu_rank_test(test: cst.BaseExpression) -> bool:
    """`rank in [-1, 0]`, `local_rank in (-1, 0)`: true on the one process of a plain run."""
    if not type(test) is cst.Comparison or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not type(target.operator) is cst.In or not type(target.comparator) in (cst.List, cst.Tuple, cst.Set):
        return False
    values = set()
    for element in target.comparator.elements:
        value = element.value
        if type(value) is cst.UnaryOperation and type(value.operator) is cst.Minus:
            value = value.expression
            if type(value) is cst.Integer:
                values.add(-int(value.value))
        elif type(value) is cst.Integer:
            values.add(int(value.value))
    return -1 in values


def _is_none(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "None"


# Names of objects that hold a run's settings: a `hasattr` test on one asks whether a config gave
# the key (on a module or a tensor it asks what torch put there, which the project never sets).
_CONFIG_OBJECT = re.compile(r"(cfg|config|conf|configs|opt|opts|args|hparams|hps?|params|settings|options)$", re.IGNORECASE)


def _compares_to_a_string(test: cst.Comparison) -> bool:
    """`mode == "uncond"`: a test of a value against a string constant."""
    return (len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.Equal
            and type(test.comparisons[0].comparator) is cst.SimpleString)


def _tests_none(test: cst.Comparison) -> bool:
    """`x is not None`, `x != None`."""
    if len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    return type(target.operator) in (cst.IsNot, cst.NotEqual) and _is_none(target.comparator)


_OPPOSITES = {cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal, cst.Is: cst.IsNot, cst.IsNot: cst.Is}


# A `global` statement, also one continued over lines ending in a backslash.
_GLOBAL_STATEMENT = re.compile(r"^[ \t]*global\b((?:[^\n]|\\\n)*)", re.MULTILINE)


def _global_names(model) -> FrozenSet[str]:
    """The names the file's `global` statements declare, read once per file."""
    text = model.text or ""
    if "global" not in text:
        return frozenset()
    return frozenset(re.findall(r"[A-Za-z_]\w*", " ".join(m.group(1) for m in _GLOBAL_STATEMENT.finditer(text))))


def _opposite(test: cst.BaseExpression) -> Optional[cst.Comparison]:
    """`a != b` for `a == b` (and back, and `is`/`is not`): a comparison that holds exactly when
    ``test`` fails; None for other tests."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    flipped = _OPPOSITES.get(type(target.operator))
    if flipped is None:
        return None
    return test.with_changes(comparisons=[target.with_changes(operator=flipped())])


def _every_step(model, test: cst.BaseExpression, ctx: Context, order: float, settings: bool = False,
                allowed: frozenset = frozenset({1, 2})) -> bool:
    """Every `%` of the test divides by 1 or 2 (`if step % log_interval == 0:` with `log_interval
    = 1` at the top of the script, `if step % 2 == 0:` to alternate two kinds of batch): true on
    every step or every other one, so no periodic gate. With ``settings``, also
    through settings and options (`args.test_freq`, whose default is 1), for the few tests a rule
    asks about itself."""
    found = []
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo:
            found.append(node.right)
        stack.extend(child for child in node.children if isinstance(child, (cst.BaseExpression, cst.ComparisonTarget, cst.Arg)))
    # Plain names only (`log_interval = 1` at the top of the script): settings objects would send
    # the question through the project's config modules, at a cost paid for every periodic test.
    kinds = (cst.Name, cst.Integer, cst.Attribute) if settings else (cst.Name, cst.Integer)
    if not found or not all(type(d) in kinds or _file_option(model, d) for d in found):
        return False
    if any(type(d) is cst.Name for d in found) and overridden_by_exec(model):
        return False  # `log_interval = 1`, then `exec(open('configurator.py').read())`: configs set it
    for divisor in found:
        values = literal_values(model, divisor, ctx, order)
        found_values = {value for _, value in values.values}
        if not values.complete or not found_values or not found_values <= allowed:
            if settings and type(divisor) is cst.Attribute and _passed_configs_allow(model, divisor.attr.value, allowed):
                continue  # `cfg.gradient_accumulation_steps` that every config file a run passes sets to 1
            return False
    return True


# A script that runs a configurator's code at its top level (nanoGPT's `exec(open(
# 'configurator.py').read())`), which rebinds its module-level settings from the config files and
# `--key=value` arguments a run passes.
_EXEC_CONFIG = re.compile(r"^exec\(\s*open\(", re.MULTILINE)


def overridden_by_exec(model) -> bool:
    """The file's module-level settings may be rebound by code it executes from a file."""
    return model.shared("exec-config", lambda m: bool(_EXEC_CONFIG.search(m.text or "")))


def _file_option(model, divisor: cst.BaseExpression) -> bool:
    """`args.log_interval` where the file, or a file of its project that adds options, names a
    `--log-interval` option: its default and the documented commands say what it is, at the
    cost of one option's values."""
    if type(divisor) is not cst.Attribute or type(divisor.value) is not cst.Name:
        return False
    name = divisor.attr.value
    if defined_options(model).get(name):
        return True
    project = model.project
    if project is None:
        return False
    dashed = name.replace("_", "-")
    adding = set(project.files_containing("add_argument"))
    return any(path in adding for spelled in {name, dashed} for path in project.files_containing(spelled))


def _passed_configs_allow(model, key: str, allowed: frozenset) -> bool:
    passed = passed_config_values(model, key)
    return bool(passed) and all(type(v) is int and v in allowed for v in passed)


# Whether a model is being traced, scripted or exported right now.
_TRACING_TESTS = frozenset({
    "torch.jit.is_scripting", "torch.jit.is_tracing", "torchvision._is_tracing", "torch.onnx.is_in_onnx_export",
    "torch._C._get_tracing_state",
})
_CHECKED_EXTREMES = frozenset({"min", "max", "amin", "amax"})
_NON_FINITE_TESTS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf"})
_REDUCED_TESTS = frozenset({"numpy.all", "numpy.any", "torch.all", "torch.any"})


def _number(node: cst.BaseExpression) -> bool:
    if type(node) is cst.UnaryOperation and type(node.operator) in (cst.Minus, cst.Plus):
        node = node.expression
    return type(node) in (cst.Integer, cst.Float)


def _extreme(model, node: cst.BaseExpression, ctx=None, order: float = 0) -> bool:
    """`torch.min(y)`, `y.max()`, `y.abs().amax()`: the smallest or largest value of a tensor;
    or the mean of its magnitudes (`torch.mean(torch.abs(offset))`: how far off it drifted);
    also through a local name bound to one of them alone (`absmean = ...; if absmean > 50:`)."""
    if type(node) is cst.Name and ctx is not None:
        reach = model.bindings.reaching(node.value, ctx, order)
        return bool(reach.assignments) and reach.closed and reach.parameter is None and all(
            a.value is not None and not a.augmented and a.index is None and _extreme(model, a.value)
            for a in reach.assignments
        )
    if type(node) is not cst.Call:
        return False
    if _mean_of_magnitudes(model, node):
        return True
    qual = model.imports.qualify(node.func) or ""
    if qual.startswith("torch.") and qual[len("torch."):] in _CHECKED_EXTREMES:
        return True
    return type(node.func) is cst.Attribute and node.func.attr.value in _CHECKED_EXTREMES and qual == ""


def _mean_of_magnitudes(model, node: cst.Call) -> bool:
    """`torch.mean(torch.abs(x))`, `x.abs().mean()`."""
    qual = model.imports.qualify(node.func) or ""
    if qual == "torch.mean" and node.args:
        inner = node.args[0].value
    elif type(node.func) is cst.Attribute and node.func.attr.value == "mean" and qual == "":
        inner = node.func.value
    else:
        return False
    if type(inner) is not cst.Call:
        return False
    inner_qual = model.imports.qualify(inner.func) or ""
    return inner_qual == "torch.abs" or (type(inner.func) is cst.Attribute and inner.func.attr.value == "abs" and inner_qual == "")


def _compared_with_zero(test: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x == 0` or `0 == x` (one comparison): the side that is not the 0."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    if type(test.comparisons[0].operator) is not cst.Equal:
        return None
    left, right = test.left, test.comparisons[0].comparator
    if type(left) is cst.Integer:
        left, right = right, left
    return left if type(right) is cst.Integer and right.value == "0" else None


def _empty_case(test: cst.BaseExpression, model=None, ctx: Optional[Context] = None, order: float = 0) -> bool:
    """`if annotations.shape[0] == 0:`, `if len(boxes) == 0:`, `if x.numel() == 0:`: the case of
    an input with nothing in it, which a sample or batch reaches only now and then. Also a mask
    that selects nothing (`if (hit & inside).sum() == 0:`, `if torch.sum(mask) == 0:`), the
    fallback of a loss for a batch without a single valid pixel. With the model, also a name the
    function binds to such a size just before (`self.n_max_boxes = gt_bboxes.size(1)`, then `if
    self.n_max_boxes == 0:`)."""
    size = _compared_with_zero(test)
    name = dotted_name(size) if size is not None and model is not None else None
    if name is not None and ctx is not None and ctx.function is not None:
        reach = model.bindings.reaching(name, ctx, order)
        return (reach.closed and reach.parameter is None and bool(reach.assignments) and all(
            a.value is not None and a.ctx.function is ctx.function and a.index is None and not a.augmented
            and _is_size(a.value) for a in reach.assignments))
    return size is not None and (_is_size(size) or _counts_selected(size, model))


def _counts_selected(size: cst.BaseExpression, model) -> bool:
    """`mask.sum()`, `torch.sum(mask)`, `mask.count_nonzero()`: how many elements a mask
    selects (a sum over a whole tensor, with no dimension given)."""
    if type(size) is not cst.Call:
        return False
    func = size.func
    if type(func) is cst.Attribute and func.attr.value in ("sum", "count_nonzero") and not size.args:
        return model is None or model.imports.qualify(func) is None
    return (model is not None and len(size.args) == 1 and size.args[0].keyword is None
            and model.imports.qualify(func) in ("torch.sum", "torch.count_nonzero"))


def _nonempty_test(test: cst.BaseExpression) -> bool:
    """`len(x) > 0`, `x.shape[0] != 0`, `x.numel() >= 1`: the size of an input is not zero."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    operator = type(test.comparisons[0].operator)
    left, right = test.left, test.comparisons[0].comparator
    if type(right) is not cst.Integer:
        return False
    return _is_size(left) and ((operator in (cst.GreaterThan, cst.NotEqual) and right.value == "0")
                               or (operator is cst.GreaterThanEqual and right.value == "1"))


def _is_size(size: cst.BaseExpression) -> bool:
    if type(size) is cst.Subscript:
        return type(size.value) is cst.Attribute and size.value.attr.value == "shape"
    if type(size) is cst.Call:
        func = size.func
        if type(func) is cst.Name:
            return func.value == "len"
        return type(func) is cst.Attribute and func.attr.value in ("size", "numel", "nelement")
    return False


def _first_round(model, test: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`if iteration == 0:` where `iteration` counts rounds (a loop target, a name stepped with
    `+=`, or a parameter every caller fills with one): true in the first round only, so its
    branch (plotting set-up, a first-step log) runs once per loop. Names of ranks and devices
    are not counters, nor are settings (`mode == 0` with `mode` read from the options)."""
    counted = _compared_with_zero(test)
    if type(counted) is not cst.Name or _RANK_WORD.search(counted.value):
        return False
    if _counts_rounds_of_a_step(model, counted.value, ctx, order):
        return False
    return _counter(model, counted.value, ctx, order)


# `if ni < 3:` plots the first batches; a bound above this is a phase of training (warm-up).
_FEW_ROUNDS = 100
_MIRRORED = {cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual}


def _first_rounds(model, test: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`if ni < 3:` where `ni` counts rounds (also a sum that adds a counter, `ni = i + nb *
    epoch`): true in the first few rounds only, as a plot of the first batches is."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    operator = type(test.comparisons[0].operator)
    counted, bound = test.left, test.comparisons[0].comparator
    if operator in _MIRRORED:
        counted, bound, operator = bound, counted, _MIRRORED[operator]
    if operator not in (cst.LessThan, cst.LessThanEqual) or type(bound) is not cst.Integer or type(counted) is not cst.Name:
        return False
    try:
        if int(bound.value.replace("_", ""), 0) > _FEW_ROUNDS:
            return False
    except ValueError:
        return False
    name = counted.value
    if _RANK_WORD.search(name) or _outer_counter(name, ctx) or _counts_rounds_of_a_step(model, name, ctx, order):
        return False
    if _counter(model, name, ctx, order):
        return True
    reach = model.bindings.reaching(name, ctx, order)
    return bool(reach.assignments) and reach.parameter is None and all(
        type(a.value) is cst.BinaryOperation and type(a.value.operator) is cst.Add and any(
            type(side) is cst.Name and _counter(model, side.value, a.ctx, a.order) and not _outer_counter(side.value, ctx)
            and not _counts_rounds_of_a_step(model, side.value, a.ctx, a.order)
            for side in (a.value.left, a.value.right))
        for a in reach.assignments)


def _last_round(model, test: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`if epoch == epochs - 1:` (or `epoch + 1 == epochs`) where `epoch` counts rounds: true in
    the last round only (a final test pass)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    for counted, other in (sides, sides[::-1]):
        if _plus_one(other, cst.Subtract) is not None:
            name = counted
        else:
            name = _plus_one(counted, cst.Add)
        if type(name) is cst.Name and not _RANK_WORD.search(name.value) and not _outer_counter(name.value, ctx) and not (
                _counts_rounds_of_a_step(model, name.value, ctx, order)) and _counter(model, name.value, ctx, order):
            return True
    return False


def _outer_counter(name: str, ctx: Context) -> bool:
    """``name`` counts the rounds of a loop around the innermost one at ``ctx`` (`if epoch ==
    epochs - 1:` inside the batch loop holds on every step of the last epoch)."""
    loop = ctx.loop
    if loop is None or name in loop.targets:
        return False
    outer = loop.parent
    while outer is not None:
        if name in outer.targets:
            return True
        outer = outer.parent
    return False


def _plus_one(expr: cst.BaseExpression, operator: type) -> Optional[cst.BaseExpression]:
    """`x - 1` (with ``operator`` Subtract) or `x + 1` (Add): x."""
    if (type(expr) is cst.BinaryOperation and type(expr.operator) is operator
            and type(expr.right) is cst.Integer and expr.right.value == "1"):
        return expr.left
    return None


def _inner_round_test(model, test: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`if i == 0:` where `i` counts the rounds of a loop nested in a per-step loop."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    if type(test.comparisons[0].operator) not in (cst.Equal, cst.NotEqual):
        return False
    return any(type(side) is cst.Name and _counts_rounds_of_a_step(model, side.value, ctx, order)
               for side in (test.left, test.comparisons[0].comparator))


def _counts_rounds_of_a_step(model, name: str, ctx: Context, order: float) -> bool:
    """`for i in range(n_sub): ... if i == 0:` inside the batch loop, or at the top of a
    framework's training step: the counter of a loop nested in a per-step loop starts again on
    every step, so its first round comes every step."""
    for assignment in model.bindings.reaching(name, ctx, order).assignments:
        # A loop target is bound in the block around its loop: that block's loop is the outer one.
        outer = assignment.ctx.loop if assignment.iterable is not None else None
        while outer is not None:
            if model.is_hot_loop(outer):
                return True
            outer = outer.parent
        function = assignment.ctx.function
        if assignment.iterable is not None and assignment.ctx.loop is None and function is not None:
            # `for i, perm in enumerate(perms): ... if i == 1:` at the top of a framework's
            # training step (Lightning's `training_step`): the framework calls it every batch.
            if model.framework_step(function):
                return True
    return False


_START_WORD = re.compile(r"(^|_)(start|starting|initial|init|first|begin|resumed?)(_|$)", re.IGNORECASE)
_COUNTER_WORD = re.compile(r"(^|_)(step|steps|iter|iters|iteration|epoch|it|i|idx|batch_idx)(_|$)", re.IGNORECASE)


def _at_start(test: cst.BaseExpression) -> bool:
    """`it == start_iter`, `self.iteration_step == self.initial_iter_step`: the step counter at
    the step the run started from (a resumed run's first step), once per run."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    if type(test.comparisons[0].operator) is not cst.Equal:
        return False
    names = [_last_name(side) for side in (test.left, test.comparisons[0].comparator)]
    if None in names:
        return False
    first, second = names
    return bool((_START_WORD.search(first) and _COUNTER_WORD.search(second) and not _START_WORD.search(second))
                or (_START_WORD.search(second) and _COUNTER_WORD.search(first) and not _START_WORD.search(first)))


def _last_name(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Name:
        return expr.value
    if type(expr) is cst.Attribute:
        return expr.attr.value
    return None


def _state_unset(model, test: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`if not state:` / `if len(state) == 0:` where `state = self.state[p]`: an optimizer's
    per-parameter state, filled on the first step only."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        name = test.expression
    else:
        counted = _compared_with_zero(test)
        if not (type(counted) is cst.Call and dotted_name(counted.func) == "len" and len(counted.args) == 1):
            return False
        name = counted.args[0].value
    return _optimizer_state(model, name, ctx, order)


def _optimizer_state(model, name: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`self.state[p]`, or a name bound only to it: an optimizer's per-parameter state."""
    if type(name) is cst.Subscript and dotted_name(name.value) == "self.state":
        return True
    if type(name) is not cst.Name:
        return False
    reach = model.bindings.reaching(name.value, ctx, order)
    return reach.closed and bool(reach.assignments) and all(
        type(a.value) is cst.Subscript and dotted_name(a.value.value) == "self.state" for a in reach.assignments
    )


def _first_state_step(model, test: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`if state['n_iter'] == 1:` where `state = self.state[p]`: the step count an optimizer keeps
    in its per-parameter state, at its first step (L-BFGS's first step size), once per run."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if type(target.operator) is not cst.Equal or type(target.comparator) is not cst.Integer:
        return False
    if target.comparator.value not in ("0", "1") or type(test.left) is not cst.Subscript:
        return False
    key = string_key(test.left)
    if key is None or not _COUNTER_WORD.search(key):
        return False
    return _optimizer_state(model, test.left.value, ctx, order)


def _counter(model, name: str, ctx: Context, order: float, depth: int = 0) -> bool:
    reach = model.bindings.reaching(name, ctx, order)
    if any(a.iterable is not None or a.augmented for a in reach.assignments):
        return True
    info = ctx.function
    if reach.parameter is None or depth > 1 or info is None or name not in info.params:
        return False
    position = info.params.index(name)
    method = info.class_name is not None and info.params[:1] in (("self",), ("cls",))
    callers = model.calls.callers(info)
    for owner, site in callers:
        arg = argument(site.node, name, position - 1 if method and site.receiver is not None else position)
        if arg is None or type(arg.value) is not cst.Name or not _counter(owner, arg.value.value, site.ctx, site.order, depth + 1):
            return False
    return bool(callers)


def _counter_in_schedule(model, test: cst.BaseExpression, ctx: Context, order: float) -> bool:
    """`if i in np.linspace(0, iterations, 10):`, `if epoch in save_epochs:`: a step counter
    tested for membership in a set of chosen steps holds on some iterations only."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.In:
        return False
    return type(test.left) is cst.Name and _counter(model, test.left.value, ctx, order)


_RANK_WORD = re.compile(r"rank|gpu|device|world|node|proc", re.IGNORECASE)


def _latch(model, guard: Guard) -> bool:
    """A flag the guarded body turns off (`if self.need_sync: ...; self.need_sync = False`, or
    `if not done: ...; done = True`), or a name it gives a value (`if loss_ema is None:
    loss_ema = loss.item()`): the body runs once, the first time the test is reached (after
    each reset of the name, as an epoch's `loss_ema = None`). One part of an `and` is enough
    (`if epoch >= freeze_epoch and not unfrozen:`)."""
    parts = conjuncts(guard.test)
    if len(parts) > 1:
        # Only a flag that outlives the call: an attribute, or a name the enclosing loop keeps
        # (`unfrozen` set before the epoch loop); a parameter (`mask is None`) starts over each call.
        return any(_persists(part, guard) and _latch_test(model, guard, part) for part in parts)
    if _parameter_test(guard.test, guard):
        return False  # `if z is None: z = torch.randn(...)`: the default made on every call
    return _latch_test(model, guard, guard.test)


def _tested(test: cst.BaseExpression) -> cst.BaseExpression:
    """The value a flag test reads: `x` in `not x`, `x is None`, `x < 0`."""
    while type(test) is cst.UnaryOperation:
        test = test.expression
    return test.left if type(test) is cst.Comparison else test


def _parameter_test(test: cst.BaseExpression, guard: Guard) -> bool:
    """The test reads a parameter of the function it sits in (`z is None`, `not cache`)."""
    read, function = _tested(test), guard.ctx.function
    return type(read) is cst.Name and function is not None and read.value in function.params


def _persists(test: cst.BaseExpression, guard: Guard) -> bool:
    name = dotted_name(_tested(test))
    if name is None:
        return False
    if name.startswith("self."):
        return True
    function = guard.ctx.function
    return guard.ctx.loop is not None and (function is None or name not in function.params)


def _latch_test(model, guard: Guard, test: cst.BaseExpression) -> bool:
    off = "False"
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, off = test.expression, "True"
    unset = (type(test) is cst.Comparison and len(test.comparisons) == 1
             and type(test.comparisons[0].operator) is cst.Is and _is_none(test.comparisons[0].comparator))
    if unset:
        # `if loss_ema is None: loss_ema = loss.item()`: the body gives the name a value
        test = test.left
    if type(test) is cst.Comparison and _lazy_init(model, guard, test):
        return True
    if off == "True" and type(test) is cst.Call:
        # `if not hasattr(self, "queue_lr"): self.queue_lr = ...`: made on the first call only
        test, unset = _hasattr_read(test), True
        if test is None:
            return False
    name = dotted_name(test)
    if name is None:
        return False
    ctx = guard.ctx
    scope = ctx.class_scope if name.startswith("self.") and ctx.class_scope else ctx.scope
    found = model.facts.assignments.get((scope, name), ())
    if unset:
        return any(
            a.value is not None and not _is_none(a.value) and not a.augmented and a.index is None
            and guard in guards_of(a.ctx)
            for a in found
        )
    return any(
        type(a.value) is cst.Name and a.value.value == off and not a.augmented and guard in guards_of(a.ctx)
        for a in found
    )


def _hasattr_read(call: cst.Call) -> Optional[cst.BaseExpression]:
    """`obj.name` for `hasattr(obj, "name")`; None for any other call."""
    if dotted_name(call.func) != "hasattr" or len(call.args) != 2 or any(a.keyword or a.star for a in call.args):
        return None
    owner, key = call.args[0].value, call.args[1].value
    if type(key) is not cst.SimpleString or not isinstance(key.evaluated_value, str) or not key.evaluated_value.isidentifier():
        return None
    if dotted_name(owner) is None:
        return None
    return cst.Attribute(value=owner, attr=cst.Name(key.evaluated_value))


def _lazy_init(model, guard: Guard, test: cst.Comparison) -> bool:
    """A stored value compared with a sentinel, that the guarded body stores into: `Z =
    self.params[2].item()`, then `if Z < 0: self.params[2] = out.mean() * n` fills a constant
    on the first call only."""
    if len(test.comparisons) != 1:
        return False
    read = test.left
    if type(read) is cst.Name:
        reach = model.bindings.reaching(read.value, guard.ctx, guard.order + 0.5)
        if len(reach.assignments) != 1 or reach.assignments[0].value is None:
            return False
        read = reach.assignments[0].value
    while type(read) is cst.Call and type(read.func) is cst.Attribute and read.func.attr.value in _READS:
        read = read.func.value  # `self.params[2].item()`
    if type(read) is not cst.Subscript or len(read.slice) != 1 or type(read.slice[0].slice) is not cst.Index:
        return False
    base, key = dotted_name(read.value), read.slice[0].slice.value
    if base is None:
        return False
    text = model.code(key)
    return any(
        store.value is not None and model.code(store.key) == text and guard in guards_of(store.ctx)
        for store in model.facts.item_stores.get(base, ())
    )


# Reads of a stored value on its way to a test (`buf[2].item()`).
_READS = frozenset({"item", "clone", "detach", "float", "int", "tolist"})


def _value_check(model, test: cst.BaseExpression, ctx=None, order: float = 0) -> bool:
    """A sanity check of values, whose branch runs only when something went wrong: a tensor's
    extreme compared with a number (`if torch.min(y) < -1.:`) or a test for NaN or infinity
    (`if torch.isnan(loss).any():`, `if not torch.isfinite(loss):`). The test itself still
    reads the GPU every step; what its branch does (print the bad value, raise) is not per step."""
    node = test
    if type(node) is cst.BooleanOperation:
        # `if torch.isnan(q).any() or q.abs().max() > 1500:` runs when one check fails; with
        # `and`, only when one does and more holds.
        left = _value_check(model, node.left, ctx, order)
        right = _value_check(model, node.right, ctx, order)
        return (left and right) if type(node.operator) is cst.Or else (left or right)
    if type(node) is cst.BinaryOperation and type(node.operator) in (cst.BitOr, cst.BitAnd):
        # `if out.isnan().any() | out.isinf().any():`, the same tests joined on tensors
        left = _value_check(model, node.left, ctx, order)
        right = _value_check(model, node.right, ctx, order)
        return (left and right) if type(node.operator) is cst.BitOr else (left or right)
    while type(node) is cst.UnaryOperation and type(node.operator) in (cst.Not, cst.BitInvert):
        node = node.expression
    if type(node) is cst.Comparison:
        if len(node.comparisons) != 1 or type(node.comparisons[0].operator) not in (
                cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual):
            return False
        left, right = node.left, node.comparisons[0].comparator
        return (_extreme(model, left, ctx, order) and _number(right)) or (_number(left) and _extreme(model, right, ctx, order))
    while type(node) is cst.Call:
        if type(node.func) is cst.Attribute and node.func.attr.value in ("any", "all", "item") and not node.args:
            node = node.func.value
        elif (model.imports.qualify(node.func) or "") in _REDUCED_TESTS and len(node.args) == 1:
            node = node.args[0].value  # `np.all(np.isfinite(p))`
        else:
            break
    if type(node) is not cst.Call:
        return False
    qual = model.imports.qualify(node.func) or ""
    if qual.startswith(("torch.", "math.", "numpy.")):
        return qual.rsplit(".", 1)[-1] in _NON_FINITE_TESTS
    return type(node.func) is cst.Attribute and node.func.attr.value in _NON_FINITE_TESTS and qual == ""


_WORLD_SIZE = re.compile(
    r"^(world_size|get_world_size|num_processes|nprocs|num_gpus|n_gpus|n_gpu|ngpus|num_replicas)$", re.IGNORECASE
)
# Whether `size <op> n` holds for a world of one process.
_HOLDS_FOR_ONE = {
    cst.Equal: lambda n: n == 1, cst.NotEqual: lambda n: n != 1,
    cst.LessThan: lambda n: 1 < n, cst.LessThanEqual: lambda n: 1 <= n,
    cst.GreaterThan: lambda n: 1 > n, cst.GreaterThanEqual: lambda n: 1 >= n,
}
_FLIPPED = {cst.LessThan: cst.GreaterThan, cst.LessThanEqual: cst.GreaterThanEqual,
            cst.GreaterThan: cst.LessThan, cst.GreaterThanEqual: cst.LessThanEqual}


def _names_world_size(node: cst.BaseExpression) -> bool:
    if type(node) is cst.Call:
        node = node.func
    last = node.value if type(node) is cst.Name else node.attr.value if type(node) is cst.Attribute else ""
    return bool(_WORLD_SIZE.match(last))


def _literal_comparison(test) -> List[Tuple[str, str]]:
    """[(name, text)] for `mode == "train"` (either side), else []."""
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.Equal:
        left, right = test.left, test.comparisons[0].comparator
        if type(left) is cst.SimpleString:
            left, right = right, left
        name = dotted_name(left)
        if name is None or type(right) is not cst.SimpleString or not isinstance(right.evaluated_value, str):
            return []
        return [(name, right.evaluated_value)]
    return []


def _launched(test: cst.BaseExpression) -> bool:
    """`args.local_rank != -1`: true when a distributed launcher started the process (its
    `else` runs in a single process)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    value = comparison.comparator
    return (type(comparison.operator) is cst.NotEqual and type(value) is cst.UnaryOperation
            and type(value.expression) is cst.Integer and value.expression.value == "1"
            and (dotted_name(test.left) or "").endswith("local_rank"))


# A setting that names how the run is distributed (`opt.distribution_type == 'multi'`) and a
# value of it that starts several processes.
_DISTRIBUTION_SETTING = re.compile(r"^distribut\w*$", re.IGNORECASE)
_MULTI_PROCESS_MODES = frozenset({"multi", "ddp", "distributed", "multiprocessing"})


def _multi_process_mode(test: cst.BaseExpression) -> bool:
    """`opt.distribution_type == 'multi'`: true when the run starts several processes."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    value = comparison.comparator
    return (type(comparison.operator) is cst.Equal and type(value) is cst.SimpleString
            and value.evaluated_value in _MULTI_PROCESS_MODES
            and _DISTRIBUTION_SETTING.match((dotted_name(test.left) or "").rpartition(".")[2]) is not None)


def _single_process_else(model, test: cst.BaseExpression) -> bool:
    """The `else` of the test runs in a single process: the test is a launch test, alone or
    with checks that torch.distributed is there (`dist.is_available() and args.local_rank != -1`),
    or a test of a multi-process mode (`opt.distribution_type == 'multi'`)."""
    if _multi_process_mode(test):
        return True
    parts = conjuncts(test)
    return any(_launched(p) for p in parts) and all(
        _launched(p) or (type(p) is cst.Call and model.imports.qualify(p.func) in (
            "torch.distributed.is_available", "torch.distributed.is_initialized"))
        for p in parts)


def single_when(test: cst.BaseExpression) -> Optional[bool]:
    """The truth value of ``test`` in a run of one process, when the test only compares the
    world size with a number (`world_size != 1`, `get_world_size() > 1`); else None."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = single_when(test.expression)
        return None if inner is None else not inner
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    operator = type(test.comparisons[0].operator)
    left, right = test.left, test.comparisons[0].comparator
    if type(left) is cst.Integer:
        left, right = right, left
        operator = _FLIPPED.get(operator, operator)
    if type(right) is not cst.Integer or not _names_world_size(left) or operator not in _HOLDS_FOR_ONE:
        return None
    return _HOLDS_FOR_ONE[operator](int(right.value))



# Switches that turn activation checkpointing on, and the library setters that do it.
_CHECKPOINT_SWITCH = re.compile(r"grad_checkpointing|gradient_checkpointing|use_checkpoint|checkpoint_activations")
_CHECKPOINT_SETTERS = {
    "grad_checkpointing": re.compile(r"\bset_grad_checkpointing\s*\("),
    "gradient_checkpointing": re.compile(
        r"\b(?:gradient_checkpointing_enable|set_gradient_checkpointing|enable_gradient_checkpointing)\s*\("),
}


# A switch that says the run is distributed (`args.distributed`, `cfg.use_ddp`).
_DISTRIBUTED_SWITCH = re.compile(r"^(?:is_|use_|multiprocessing_)?(?:distributed|ddp|dist|multi_?gpus?)$", re.IGNORECASE)


class GuardKinds:
    """Per model: (periodic, rank-0) for a test, a guard, a context; memoised."""

    def __init__(self, model) -> None:
        self.model = model
        self._tests: Dict[Tuple[int, int], Tuple[bool, bool]] = {}
        self._named: Dict[str, list] = {}  # method name -> the project methods of that name, when periodic
        self._contexts: Dict[int, bool] = {}
        self._dead: Dict[int, bool] = {}
        self._unset: Dict[str, bool] = {}  # attribute names no nearby file sets (getattr flags)
        self._guarded_calls: Optional[Dict[int, List[object]]] = None  # id(guard) -> calls under it
        self._loop_steps: Dict[int, List[object]] = {}  # id(loop) -> its calls that step an optimizer
        self._rare_after: Dict[int, Optional[int]] = {}  # id(function) -> first row only rare paths reach
        self._opposites: Dict[int, tuple] = {}  # id(test) -> (test, its opposite comparison)

    def test_kinds(self, test: cst.BaseExpression, ctx: Context, order: float, depth: int = 0) -> Tuple[bool, bool]:
        key = (id(test), depth)
        known = self._tests.get(key)
        if known is not None:
            return known
        self._tests[key] = (False, False)
        if _single_gpu_rank_test(test):
            result = (False, False)
        else:
            result = gate_kinds(test)
            if not result[0] and _counter_in_schedule(self.model, test, ctx, order):
                result = (True, result[1])
            if result[0] and _every_step(self.model, test, ctx, order):
                result = (False, result[1])
            if not result[1] and _spawned_index_test(self.model, test, ctx):
                result = (result[0], True)
            if not (result[0] and result[1]) and depth < _MAX_DEPTH:
                # `if i % k == 0 and opt.is_master_node:`: the rank part may sit in a value, and
                # the periodic part in a helper (`if divisible_by(step, n) and is_main:`).
                through = self._through_values(test, ctx, order, depth)
                result = (result[0] or through[0], result[1] or through[1])
        self._tests[key] = result
        return result

    def _through_values(self, test: cst.BaseExpression, ctx: Context, order: float, depth: int) -> Tuple[bool, bool]:
        """The parts of a test that hold a gate elsewhere: a name bound to one, a helper that
        returns one."""
        modulo = rank = False
        stack = [test]
        model = self.model
        while stack:
            node = stack.pop()
            found = (False, False)
            if type(node) is cst.BooleanOperation:
                stack.extend((node.left, node.right))
                continue
            if type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
                stack.append(node.expression)
                continue
            if type(node) is cst.Call:
                targets = model.calls.targets_of_expression(node, ctx, order)
                if not targets and type(node.func) is cst.Attribute:
                    # `self.metrics_processor.should_log(step)` on an object a config built:
                    # the project's methods of that name, when each tests the step the same way.
                    targets = self._methods_named(node.func.attr.value)
                for owner, info in targets:
                    for site in info.return_sites:
                        kinds = owner.guards.test_kinds(site.value, site.ctx, site.order, depth + 1)
                        found = (found[0] or kinds[0], found[1] or kinds[1])
                    if not found[0] and _true_only_when_periodic(owner, info, depth):
                        found = (True, found[1])  # `if step % freq == 0: return True` then `return False`
            elif type(node) is cst.Comparison and _tests_none(node) and dotted_name(node.left) is not None:
                # `if logger is not None:`, where only rank 0 ever gets a logger
                found = (False, self.main_process_object(dotted_name(node.left), ctx, order, depth))
            elif dotted_name(node) is not None:
                name = dotted_name(node)
                reach = model.bindings.reaching(name, ctx, order)
                for assignment in reach.assignments:
                    if assignment.value is not None and assignment.index is None:
                        kinds = self.test_kinds(assignment.value, assignment.ctx, assignment.order, depth + 1)
                        found = (found[0] or kinds[0], found[1] or kinds[1])
                if not found[0] and self._set_now_and_then(reach.assignments, ctx):
                    found = (True, found[1])  # `do_eval = False`, then `if step % n == 0: do_eval = True`
                if not found[0] and not reach.assignments and name.startswith("self.") and self._set_in_a_base(name, ctx):
                    found = (True, found[1])  # `self._do_log`, set now and then by a base class's `_check_log()`
                if not found[0] and reach.parameter is not None and not reach.assignments and type(node) is cst.Name:
                    found = (self._passed_periodic(reach.parameter, name, depth), found[1])
                if not found[1] and self._set_for_one_rank(reach.assignments, depth):
                    found = (found[0], True)
                if not found[1] and not reach.assignments and "." in name and not name.startswith(("self.", "cls.")):
                    # `if args.save_logs:` in a helper handed the options, where `main()` set
                    # `args.save_logs = args.logs and is_master(args)`: every store of that
                    # attribute in the file is a rank test.
                    stores = _plain_stores(model).get(name.rsplit(".", 1)[-1], [])
                    if stores and self._set_for_one_rank(stores, depth):
                        found = (found[0], True)
                    elif not stores and self._set_for_one_rank_elsewhere(name.rsplit(".", 1)[-1], depth):
                        # `if opt.log:` where `init_dist(opt)`, in a module this file imports, sets
                        # `opt.log = True` only under `if opt.rank == 0:`.
                        found = (found[0], True)
                if not found[1] and self.main_process_object(name, ctx, order, depth):
                    found = (found[0], True)
            modulo, rank = modulo or found[0], rank or found[1]
        return modulo, rank

    def _set_now_and_then(self, assignments, ctx: Context) -> bool:
        """A flag whose every true value is set under a periodic or a rare test of the same
        function (`do_eval = False`, then `if step % interval == 0: do_eval = True`; `plot =
        False`, then `if epoch % k == 0 and i == 0: plot = True`)."""
        truthy = [a for a in assignments if type(a.value) is cst.Name and a.value.value == "True"]
        if not truthy or len(truthy) == len(assignments) or any(
                type(a.value) is not cst.Name or a.value.value not in ("True", "False") for a in assignments):
            return False
        return all(
            any(g.positive and g.ctx.function is a.ctx.function
                and (self.test_kinds(g.test, g.ctx, g.order + 0.5, _MAX_DEPTH)[0] or self._rare(g)
                     or occasional(g.test, True))  # `if frame >= last_log + interval:`
                for g in guards_of(a.ctx))
            for a in truthy
        )

    def _set_in_a_base(self, attribute: str, ctx: Context) -> bool:
        """The class binds ``attribute`` nowhere, and a project class it derives from (in another
        module) sets it true only now and then (`RLBase._check_log`: `self._do_log = True` under
        `if self.frame_train >= self._last_log_frame + self.log_interval:`)."""
        model = self.model
        cls = model.facts.classes.get(ctx.class_name or "")
        for base in cls.bases if cls is not None else ():
            symbol = model.symbol(base) if "." in base else None
            if symbol is None or symbol.kind != "class" or symbol.info is None or symbol.model is model:
                continue
            stores = symbol.model.facts.assignments.get((symbol.info.scope, attribute), ())
            if stores and symbol.model.guards._set_now_and_then(list(stores), ctx):
                return True
        return False

    def _set_for_one_rank(self, assignments, depth: int) -> bool:
        """A flag whose every true value is set under a rank-0 test, or where the run has a
        single process (`default_gpu = False`, then `if rank == 0: default_gpu = True` in the
        distributed branch and `default_gpu = True` in the `else` of `if args.local_rank != -1:`)."""
        truthy = [a for a in assignments if type(a.value) is cst.Name and a.value.value == "True"]
        if len(truthy) == len(assignments):
            return False
        ranked = False
        for assignment in assignments:
            value = assignment.value
            if type(value) is cst.Name and value.value == "False":
                continue
            if assignment in truthy:
                guards = [g for g in guards_of(assignment.ctx) if g.ctx.function is assignment.ctx.function]
                if not any((g.positive and not g.exits and self.test_kinds(g.test, g.ctx, g.order + 0.5, depth + 1)[1])
                           or (not g.positive and not g.exits and _single_process_else(self.model, g.test))
                           for g in guards):
                    return False
            elif value is None or not self.test_kinds(value, assignment.ctx, assignment.order, depth + 1)[1]:
                return False  # `should_diag = gpu == 0` in the multi-process branch is a rank test
            ranked = True
        return ranked

    def _set_for_one_rank_elsewhere(self, attribute: str, depth: int) -> bool:
        """The project modules this file imports store ``attribute`` on an object other than
        `self`, and every one of them sets it true only for one rank (`_set_for_one_rank`)."""
        project, path = self.model.project, self.model.real_path
        if project is None or path is None:
            return False
        found = False
        for other in project.imported_models(self.model):
            stores = _plain_stores(other).get(attribute, [])
            if not stores:
                continue
            if not other.guards._set_for_one_rank(stores, depth):
                return False
            found = True
        return found

    def _passed_periodic(self, info, name: str, depth: int) -> bool:
        """A parameter every call of which passes a periodic value (`train_step(..., do_eval)`
        where the caller's `do_eval` is set now and then)."""
        if depth >= _MAX_DEPTH or name not in info.params:
            return False
        position = info.params.index(name) - info.receiver_params
        calls = self.model.callers(info)
        if not calls:
            return False
        for owner, site in calls:
            arg = argument(site.node, name, position)
            if arg is None or not owner.guards.test_kinds(arg.value, site.ctx, site.order, depth + 1)[0]:
                return False
        return True

    def _methods_named(self, name: str) -> list:
        """The project's methods called ``name`` (model/named_methods.py), when every one of
        them returns a periodic test (`step == 1 or step % freq == 0`); none otherwise."""
        known = self._named.get(name)
        if known is not None:
            return known
        self._named[name] = []
        found = project_methods_named(self.model, name)
        periodic = bool(found) and all(
            info.return_sites and all(
                owner.guards.test_kinds(site.value, site.ctx, site.order, _MAX_DEPTH)[0] for site in info.return_sites
            )
            for owner, info in found
        )
        self._named[name] = found if periodic else []
        return self._named[name]

    def main_process_object(self, name: Optional[str], ctx: Context, order: float, depth: int = 0) -> bool:
        """``name`` holds None, or an object made only under a rank-0 test (`logger =
        WandbLogger(args) if rank == 0 else None`, or one per arm of `if global_rank == 0:`),
        on every path, also through the parameter it is handed in as: testing it (`if logger:`)
        is a rank-0 gate."""
        model = self.model
        if name is None or depth > _MAX_DEPTH:
            return False
        reach = model.bindings.reaching(name, ctx, order)
        made = False
        for assignment in reach.assignments:
            value = assignment.value
            if value is None or assignment.index is not None:
                return False
            if _is_none(value):
                continue
            if type(value) is cst.Name and assignment.ctx.function is not None and value.value in assignment.ctx.function.params:
                # `self.save_path = save_path` in `__init__`: what the constructions pass
                if not self.main_process_object(value.value, assignment.ctx, assignment.order, depth + 1):
                    return False
                made = True
                continue
            if type(value) is cst.IfExp and _is_none(value.orelse):
                if not self.test_kinds(value.test, assignment.ctx, assignment.order, depth + 1)[1]:
                    return False
            elif not self._under_rank_test(assignment.ctx):
                return False
            made = True
        info = reach.parameter
        if info is not None:
            position = info.params.index(name) - info.receiver_params
            callers = model.callers(info)
            if not callers and info.node.name.value == "__init__":
                callers = model.calls.constructions(info)
            if not callers:
                return False
            for owner, site in callers:
                arg = argument(site.node, name, position)
                if arg is None:
                    default = parameter_default(info, name)
                    if default is None or not _is_none(default) or any(a.star for a in site.node.args):
                        return False
                    continue
                if _is_none(arg.value):
                    continue
                if not (owner.guards._under_rank_test(site.ctx) or owner.guards.main_process_object(
                        dotted_name(arg.value), site.ctx, site.order, depth + 1)):
                    return False  # handed a value outside a rank-0 branch
                made = True
        elif not reach.closed:
            return False
        return made

    def rank_only(self, ctx: Context) -> bool:
        """A guard around ``ctx`` leaves it to one rank, as read through values: a flag bound
        to a rank test (`args.save_logs = args.logs and is_master(args)`, then `if
        args.save_logs:`), a helper that returns one, an object only rank 0 gets."""
        for guard in guards_of(ctx):
            test = guard.test
            negated = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
            if guard.positive and not guard.exits and not negated:
                pass  # `if args.save_logs:`
            elif guard.exits and negated:
                test = test.expression  # `if not args.save_logs: return`
            elif guard.exits and type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
                # `if not self.is_world_process_zero() or self.args.hub_strategy == END: return`:
                # what follows runs only where every part is false, so where `not X` is, X holds.
                if any(self.test_kinds(part.expression, guard.ctx, guard.order + 0.5)[1]
                       for part in _disjuncts(test)
                       if type(part) is cst.UnaryOperation and type(part.operator) is cst.Not):
                    return True
                continue
            elif guard.exits and _is_none_test(test):
                # `if self.save_path is None: return`, where only rank 0 is handed a path
                if self.main_process_object(dotted_name(test.left), guard.ctx, guard.order + 0.5):
                    return True
                continue
            else:
                continue
            if self.test_kinds(test, guard.ctx, guard.order + 0.5)[1]:
                return True
        return False

    def _under_rank_test(self, ctx: Context) -> bool:
        return any(
            guard.positive and self.test_kinds(guard.test, guard.ctx, guard.order + 0.5)[1] for guard in guards_of(ctx)
        )

    def gates(self, guard: Guard, ranks: bool = True) -> bool:
        """The guard leaves its statements to some steps or to one rank, or to runs the project
        never makes (`if self.autobalance:` where every construction leaves it False, the `else`
        of `if self.use_dfl:` where every construction leaves it on)."""
        if not guard.positive and not guard.exits and not guard.steps and self._never_false(guard):
            return True
        if guard.positive and not guard.exits and not guard.steps and any(
                _debug_switch(t) or self._debug_mode(t) for t in conjuncts(guard.test)):
            return True  # `if opt.debug:`, `if args.vis > 0:`: a run asks for it, training does not
        if not guard.steps and self.single_process_arm(guard) and every_run_several_processes(self.model):
            return True  # `if not args.distributed:` where every documented run starts 8 processes
        if not (guard.positive and not guard.exits) and not guard.steps and _nonempty_test(guard.test):
            # the `else` of `if len(gt_joints) > 0:`, or what follows `if len(gt_joints) > 0:
            # return loss`: a batch with none of the labelled samples
            return True
        if (self._steps(guard) and not self._steps_elsewhere(guard)) or not (guard.positive or guard.exits):
            return False
        modulo, rank = self.test_kinds(guard.test, guard.ctx, guard.order + 0.5)
        if modulo or (rank and ranks) or (guard.positive and self._never_true(guard)) or self._rare(guard):
            return True
        return occasional(guard.test, guard.positive and not guard.exits) and not _inner_round_test(
            self.model, guard.test, guard.ctx, guard.order + 0.5)

    def single_process_arm(self, guard: Guard) -> bool:
        """The guard lets its statements run only in a run of one process: a world-size test
        (`if world_size == 1:`), the false side of a launch test (the `else` of `if
        args.distributed:` around `init_process_group(...)`, `if not args.distributed:`) or of a
        switch named for distributed runs."""
        runs_when_true = guard.positive and not guard.exits
        holds = single_when(guard.test)
        if holds is not None:
            return holds == runs_when_true
        test, wanted = guard.test, not runs_when_true
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, wanted = test.expression, not wanted
        return wanted and self._distributed_switch(test)

    def _distributed_switch(self, test: cst.BaseExpression) -> bool:
        name = dotted_name(test)
        if name is not None and _DISTRIBUTED_SWITCH.match(name.rpartition(".")[2]):
            return True
        return spelled(self.model, test) in launch_tests(self.model)

    def _debug_mode(self, test: cst.BaseExpression) -> bool:
        """`torch.is_anomaly_enabled()`: true only in a run that debugs autograd, which is a
        run nobody trains with (anomaly mode itself slows every step)."""
        return type(test) is cst.Call and self.model.imports.qualify(test.func) in _DEBUG_MODES

    def _rare(self, guard: Guard) -> bool:
        """The body (only: not the `else`, not what follows `if ...: continue`) of a test that
        holds now and then: a sanity check's branch runs when something went wrong, an empty
        input's when a sample has nothing in it, `if step == 0:` once."""
        if not guard.positive or guard.exits:
            return False
        test = guard.test
        return _value_check(self.model, test, guard.ctx, guard.order + 0.5) or _empty_case(
            test, self.model, guard.ctx, guard.order + 0.5) or _first_rounds(
            self.model, test, guard.ctx, guard.order + 0.5) or _last_round(
            self.model, test, guard.ctx, guard.order + 0.5) or any(
            # `epoch % k == 0 and i == 0`: a conjunction holds at most as often as its rarest part
            _first_round(self.model, part, guard.ctx, guard.order + 0.5) for part in conjuncts(test)
        ) or _latch(self.model, guard) or _state_unset(
            self.model, test, guard.ctx, guard.order + 0.5) or any(_at_start(part) for part in conjuncts(test)) or (
            _first_state_step(self.model, test, guard.ctx, guard.order + 0.5))

    def step_branch(self, guard: Guard) -> bool:
        """The guard is the accumulation boundary every optimizer update goes through (`if
        accumulated >= accum_steps: opt.step()`): what it holds runs once per update."""
        return guard.positive and not guard.exits and self._steps(guard) and not self._steps_elsewhere(guard)

    def _steps(self, guard: Guard) -> bool:
        """An optimizer steps under the guard: there (`if (i + 1) % accum == 0: opt.step()`), or in
        a function a call there runs (`if T % replay_frequency == 0: agent.learn(memory)`)."""
        if guard.steps:
            return True
        if guard.ctx.loop is None:
            return False
        if self._guarded_calls is None:
            index: Dict[int, List[object]] = {}
            for site in self.model.facts.calls:
                for around in guards_of(site.ctx):
                    index.setdefault(id(around), []).append(site)
            self._guarded_calls = index
        return self.model.calls_optimizer_step(self._guarded_calls.get(id(guard), ()))

    def _steps_elsewhere(self, guard: Guard) -> bool:
        """The loop around the guard also steps an optimizer outside it (itself, or through a
        call): the guarded step is an extra update made on some iterations (a lazy regulariser),
        not the accumulation boundary every update goes through. Outside a loop, the function
        around the guard steps one itself outside it (`train_discriminator` of a GAN coach,
        called every step, with its lazy R1 update under `if step % d_reg_every == 0:`)."""
        loop = guard.ctx.loop
        if loop is None:
            function = guard.ctx.function
            return function is not None and any(guard not in guards_of(ctx) for ctx in function.step_contexts)
        if self._own_optimizers(guard, loop):
            return False  # TD3's delayed actor update: the branch is that optimizer's every update
        if any(guard not in guards_of(ctx) for ctx in loop.step_contexts):
            return True
        return any(guard not in guards_of(site.ctx) for site in self._stepping_calls(loop))

    def _own_optimizers(self, guard: Guard, loop: LoopInfo) -> bool:
        """The optimizers stepped under the guard (`if step % policy_frequency == 0:
        actor_optimizer.step()`) are stepped nowhere else in the loop, while another one is
        stepped outside it (`q_optimizer.step()` every iteration): the guard schedules the
        updates of those optimizers, each run of the branch is one, not an extra update now and
        then (a lazy regulariser steps the same optimizer as the main update)."""
        inside: Set[str] = set()
        outside: Set[str] = set()
        for site in self.model.method_calls("step"):
            current = site.ctx.loop
            while current is not None and current is not loop:
                current = current.parent
            if current is None:
                continue
            name = site.receiver_name
            if not name:
                return False  # `self.optimizers[i].step()`: which one is unknown
            if not _OPTIMIZER_NAME.search(name):
                continue  # an environment's, a scheduler's, an engine's step
            (inside if guard in guards_of(site.ctx) else outside).add(name)
        return bool(inside) and bool(outside) and inside.isdisjoint(outside)

    def _stepping_calls(self, loop: LoopInfo) -> List[object]:
        """The calls in the loop that run a function stepping an optimizer (once per loop: a
        loop of many guarded steps asks for each)."""
        known = self._loop_steps.get(id(loop))
        if known is None:
            known = self._loop_steps[id(loop)] = [s for s in loop.sites if self.model.calls_optimizer_step([s])]
        return known

    def dead(self, ctx: Context) -> bool:
        """Code no run of the project reaches: some guard around it tests a string setting (or
        None) against values it never has (`elif self.model in ["L2", "l2"]:` where every path
        sets `self.model` to "net-lin"), or its `else` against values it always has; or it runs
        only with several processes and the world size it tests is always 1."""
        known = self._dead.get(id(ctx))
        if known is None:
            known = self._dead[id(ctx)] = any(
                self._decided_against(g) or self._never_distributed(g) or self._traced_only(g) for g in guards_of(ctx)
            )
        return known

    def _traced_only(self, guard: Guard) -> bool:
        """The arm of `if torchvision._is_tracing():` (`torch.jit.is_scripting()`,
        `torch.onnx.is_in_onnx_export()`) that runs only while a model is traced or exported:
        never in an eager training run."""
        if not guard.positive or guard.exits:
            return False
        test = guard.test
        if type(test) is not cst.Call or test.args:
            return False
        name = self.model.imports.qualify(test.func) or dotted_name(test.func) or ""
        return name in _TRACING_TESTS

    def _never_distributed(self, guard: Guard) -> bool:
        """`if self.world_size > 1:` (the DDP wrap) where the world size is 1 on every path the
        project takes: a parameter whose default is 1 that no construction or call passes, with
        no command-line option behind it."""
        holds = single_when(guard.test)
        if holds is None or holds == (guard.positive and not guard.exits):
            return False
        test = guard.test
        while type(test) is cst.UnaryOperation:
            test = test.expression
        left = test.left if type(test.left) is not cst.Integer else test.comparisons[0].comparator
        if type(left) is cst.Call:
            return False  # `dist.get_world_size()`: known only at run time
        found = literal_values(self.model, left, guard.ctx, guard.order + 0.5)
        return found.complete and found.option is None and bool(found.values) and all(
            kind == "int" and value == 1 for kind, value in found.values
        )

    def _decided_against(self, guard: Guard) -> bool:
        holds = guard.positive and not guard.exits
        test = guard.test
        if holds and type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
            # `if args.dist_url == "env://" and args.world_size == -1:`: one conjunct that never
            # holds is enough.
            # Left to right, as Python evaluates them: a later part may read what this guard
            # protects (`args.world_size`, whose store under this very test is being judged).
            return any(self._outcomes(part, guard) == {False} for part in reversed(conjuncts(test)))
        outcomes = self._outcomes(test, guard)
        return outcomes is not None and holds not in outcomes

    def _outcomes(self, test: cst.BaseExpression, guard: Guard) -> Optional[Set[bool]]:
        """The truth values a comparison of a string setting (or None) with literals takes on
        every path the project takes, if known."""
        if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
            # `args.arch.startswith("alexnet") or args.arch.startswith("vgg")`
            left, right = self._outcomes(test.left, guard), self._outcomes(test.right, guard)
            if left is None or right is None:
                return None
            return {a or b for a in left for b in right} if len(left) == 1 or len(right) == 1 else left | right
        if type(test) is cst.Call:
            return self._prefix_outcomes(test, guard)
        if type(test) in (cst.Name, cst.Attribute) and dotted_name(test) is not None:
            # `if cfg.multi_gpu:` where the project's config module sets `multi_gpu = False` and
            # nothing sets it again: a switch the shipped code leaves off (no option behind it).
            found = literal_values(self.model, test, guard.ctx, guard.order + 0.5)
            if found.complete and found.option is None and found.values and all(
                    kind == "bool" for kind, _ in found.values) and not self._set_through_global(test):
                return {bool(value) for _, value in found.values}
            return None
        if type(test) is not cst.Comparison or len(test.comparisons) != 1 or dotted_name(test.left) is None:
            return None
        operator = type(test.comparisons[0].operator)
        comparator = test.comparisons[0].comparator
        model = self.model
        if operator in (cst.In, cst.NotIn):
            if type(comparator) not in (cst.List, cst.Tuple, cst.Set):
                return None
            allowed = [constant(model, e.value) for e in comparator.elements]
        elif operator in (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot):
            allowed = [constant(model, comparator)]
        else:
            return None
        if not allowed or any(a is None or a[0] not in ("str", "none") for a in allowed):
            return None
        found = literal_values(model, test.left, guard.ctx, guard.order + 0.5)
        if not found.complete or not found.values or any(t[0] not in ("str", "none") for t in found.values):
            return None
        if is_environment_setting(found.option):
            return None  # an environment variable's default: any launch may set another value
        hits = {t in allowed for t in found.values}
        return hits if operator in (cst.In, cst.Equal, cst.Is) else {not h for h in hits}

    def _prefix_outcomes(self, test: cst.Call, guard: Guard) -> Optional[Set[bool]]:
        """`args.arch.startswith("alexnet")` (or `endswith`) of a string setting known on every
        path: the truth values it takes."""
        func = test.func
        if type(func) is not cst.Attribute or func.attr.value not in ("startswith", "endswith") or len(test.args) != 1:
            return None
        if dotted_name(func.value) is None or test.args[0].keyword is not None or test.args[0].star:
            return None
        affix = test.args[0].value
        options = [e.value for e in affix.elements] if type(affix) is cst.Tuple else [affix]
        texts = [constant(self.model, e) for e in options]
        if not texts or any(t is None or t[0] != "str" for t in texts):
            return None
        found = literal_values(self.model, func.value, guard.ctx, guard.order + 0.5)
        if not found.complete or not found.values or any(t[0] != "str" for t in found.values):
            return None
        if is_environment_setting(found.option):
            return None
        check = str.startswith if func.attr.value == "startswith" else str.endswith
        return {any(check(value, t[1]) for t in texts) for _, value in found.values}

    def switched_off(self, ctx: Context) -> Optional[Guard]:
        """The guard around ``ctx`` that is a flag no run of the project turns on (`if
        self.use_checkpoint:` where every construction leaves it False, `if getattr(self.config,
        "gradient_checkpointing", False) and self.training:` where nothing sets that attribute),
        if any."""
        for guard in guards_of(ctx):
            if guard.exits:
                continue
            if not guard.positive:
                # The `else` of `if not fp16:` runs when `fp16` holds, and that of `if
                # args.local_rank == -1 or args.no_cuda:` when `args.local_rank != -1` does
                # (with the other parts failing too).
                for part in _disjuncts(guard.test):
                    if type(part) is cst.UnaryOperation and type(part.operator) is cst.Not:
                        held = part.expression
                    else:
                        held = self._opposite_of(part)
                    held_guard = dataclasses.replace(guard, test=held, positive=True) if held is not None else None
                    if held_guard is not None and self._off(held_guard):
                        return held_guard
                continue
            if self._off(guard):
                return guard
        return None

    def _off(self, guard: Guard) -> bool:
        return self._never_true(guard) or any(self._unset_attribute(t) for t in conjuncts(guard.test))

    def _set_through_global(self, flag: cst.BaseExpression) -> bool:
        """A function of the flag's module (or of this file) rebinds it through a `global`
        statement (`def init_param(opt): global multi_gpu; multi_gpu = opt.multi_gpu`), which
        the module's own bindings do not show."""
        name = dotted_name(flag) or ""
        last = name.rsplit(".", 1)[-1]
        models = [self.model]
        qual = self.model.imports.qualify_dotted(name) if "." in name else None
        symbol = self.model.symbol(qual) if qual is not None else None
        if symbol is not None and symbol.model is not self.model:
            models.append(symbol.model)
        return any(last in m.shared("global-names", _global_names) for m in models)

    def _opposite_of(self, test: cst.BaseExpression) -> Optional[cst.Comparison]:
        """`_opposite`, made once per test and kept: the value model remembers answers by the
        id of the expression asked about, so a node made up for a question must live on."""
        known = self._opposites.get(id(test))
        if known is None:
            known = self._opposites[id(test)] = (test, _opposite(test))
        return known[1]

    def switched_off_by_callers(self, ctx: Context, depth: int = 2) -> Optional[Guard]:
        """A guard that is a flag no run turns on, around every call of the function ``ctx``
        sits in (for a class's `__init__`, around every construction), up to ``depth`` calls up:
        `loss_scaler = NativeScaler()` only under `if args.amp:` builds the scaler class on no
        run where `--amp` is never passed. None when some call is unguarded or none is seen."""
        info = ctx.function
        if info is None or depth <= 0:
            return None
        callers = self.model.callers(info)
        if not callers and info.node.name.value == "__init__":
            callers = self.model.calls.constructions(info)
        found = None
        for owner, site in callers:
            guard = owner.guards.switched_off(site.ctx) or owner.guards.switched_off_by_callers(site.ctx, depth - 1)
            if guard is None:
                return None
            found = found or guard
        return found

    def switched_off_arm(self, node: cst.CSTNode, ctx: Context, order: float) -> Optional[cst.BaseExpression]:
        """The test of a conditional expression whose true arm holds ``node`` and that is a
        flag no run turns on (`checkpoint(blk, x) if self.use_checkpoint else blk(x)`), if any."""
        statement = self.model.statement_of.get(id(node))
        if statement is None:
            return None
        stack: List[cst.CSTNode] = [statement]
        while stack:
            current = stack.pop()
            if type(current) is cst.IfExp and _holds(current.body, node):
                guard = Guard(current.test, True, ctx, int(order))
                if self._never_true(guard) or any(self._unset_attribute(t) for t in conjuncts(current.test)):
                    return current.test
            elif type(current) is cst.IfExp and _holds(current.orelse, node):
                # `RandomSampler(ds) if args.local_rank == -1 else DistributedSampler(ds)`: the
                # else arm runs when the comparison fails, which is when its opposite holds.
                opposite = self._opposite_of(current.test)
                if opposite is not None and self._never_true(Guard(opposite, True, ctx, int(order))):
                    return current.test
            stack.extend(children(current))
        return None

    def option_flags(self, node: cst.CSTNode, ctx: Context) -> List[Tuple[cst.BaseExpression, str, bool]]:
        """(test, flag name, whether it is read from a model config object) of the settings that
        the code ``node`` runs under: a positive guard around it, or the test of a conditional
        expression whose true arm holds it, read for its conjuncts that are plain flags
        (`self.use_checkpoint`, `args.grad_ckpt`, `getattr(self.config, "gradient_checkpointing",
        False)`, `cfg.get("with_cp")`). Comparisons, calls of other kinds and `self.training` /
        `x.requires_grad` are no flags."""
        tests = [g.test for g in guards_of(ctx) if g.positive and not g.exits]
        statement = self.model.statement_of.get(id(node))
        stack: List[cst.CSTNode] = [statement] if statement is not None else []
        while stack:
            current = stack.pop()
            if type(current) is cst.IfExp and _holds(current.body, node):
                tests.append(current.test)
            stack.extend(children(current))
        out: List[Tuple[cst.BaseExpression, str, bool]] = []
        for test in tests:
            for part in conjuncts(test):
                name = _flag_name(part)
                if name is not None:
                    out.append((test, name, _on_model_config(part)))
        return out

    def offloading(self, ctx: Context) -> bool:
        """Some guard around ``ctx`` is a switch named for keeping data in host memory (`if
        self.cpu_cache:`, `if args.offload:`, `if keep_on_cpu and ...`) or asks for the CPU (`if
        mode == "cpu":`): what copies to the host under it is a choice, not an accident of the
        step."""
        for guard in guards_of(ctx):
            if guard.positive and not guard.exits and any(
                _OFFLOAD_SWITCH.search((dotted_name(t) or "").rpartition(".")[2]) or _asks_for_cpu(t)
                for t in conjuncts(guard.test)
            ):
                return True
        return False

    def evaluation_arm(self, ctx: Context, loop: LoopInfo) -> bool:
        """The loop steps an optimizer only under a flag (`if train: loss.backward();
        optimizer.step()`), and ``ctx`` runs only when that flag is false (`if not train:`, the
        `else` of `if train:`): the evaluation passes of an epoch function shared by training
        and validation, not a training step."""
        flags = None
        modes = None  # (name, literal) pairs the steps run under: `train = (mode == 'train')`
        for step_ctx in loop.step_contexts:
            tests = [(t, g) for g in guards_of(step_ctx) if g.positive and not g.exits for t in conjuncts(g.test)]
            held = {dotted_name(t) for t, _ in tests}
            held.discard(None)
            flags = held if flags is None else flags & held
            found = {pair for t, g in tests for pair in self._mode_tests(t, g.ctx, g.order)}
            modes = found if modes is None else modes & found
        if not flags and not modes:
            return False
        for guard in guards_of(ctx):
            if guard.exits:
                continue
            if guard.positive and modes and any(
                name == other and literal != value
                for t in conjuncts(guard.test) for name, literal in _literal_comparison(t)
                for other, value in modes
            ):
                return True  # `if mode == 'test':` where the steps run only when `mode == 'train'`
            if not flags:
                continue
            if not guard.positive and dotted_name(guard.test) in flags:
                return True  # the `else` of `if train:`
            if guard.positive and any(
                type(t) is cst.UnaryOperation and type(t.operator) is cst.Not and dotted_name(t.expression) in flags
                for t in conjuncts(guard.test)
            ):
                return True
        return False

    def _mode_tests(self, test: cst.BaseExpression, ctx: Context, order: float) -> Set[Tuple[str, str]]:
        """(name, literal) of `mode == 'train'`, also through a name bound to it on every path
        (`train = (mode == 'train')`, then `if train:`)."""
        found = set(_literal_comparison(test))
        if not found and type(test) is cst.Name:
            reach = self.model.bindings.reaching(test.value, ctx, order)
            if reach.closed and reach.assignments and reach.parameter is None:
                answers = [set(_literal_comparison(a.value)) if a.value is not None and a.index is None else set()
                           for a in reach.assignments]
                found = set.intersection(*answers) if answers else set()
        return found

    def _unset_attribute(self, test: cst.BaseExpression) -> bool:
        """`getattr(obj, "name", False)` (or None, 0) where no file of the project near this one
        sets `name`: not as an attribute, a keyword, a dict key or through `setattr`. Also
        `hasattr(cfg.gen_opt, "clip_grad_norm")` on a config object (a name like `cfg`, `opt`,
        `args`) when, besides, no config file of the project gives that key."""
        if type(test) is cst.Attribute:
            return self._library_flag_off(test)
        if not type(test) is cst.Call or self.model.imports.qualify(test.func) is not None:
            return False
        if dotted_name(test.func) == "hasattr" and len(test.args) == 2:
            return self._config_key_absent(test)
        if type(test.func) is cst.Attribute and test.func.attr.value == "get" and len(test.args) == 2:
            return self._key_left_out(test)
        if dotted_name(test.func) != "getattr" or len(test.args) != 3:
            return False
        key, default = test.args[1].value, test.args[2].value
        if not type(key) is cst.SimpleString or not _false_constant(default):
            return False
        name = key.evaluated_value
        if not isinstance(name, str) or not name.isidentifier():
            return False
        known = self._unset.get(name)
        if known is None:
            # Set to a false constant, or to a parameter of its own name handed on (`self.
            # gradient_checkpointing = gradient_checkpointing` in a config class), is still off;
            # a test module that turns it on is no run.
            known = self._unset[name] = never_given_true(self.model, name, {name, "self." + name})
        return known

    def _library_flag_off(self, test: cst.Attribute) -> bool:
        """`self.model.transformer.grad_checkpointing` on a module a library built (open_clip):
        a checkpointing switch of an object the project holds, which no file near this one sets
        or turns on through the library's setter (`set_grad_checkpointing()`): off, as such
        switches are by default. Only checkpointing switches: a library's other attributes
        (`x.requires_grad`) hold what they hold."""
        name = dotted_name(test)
        if name is None or name.count(".") < 3 or not _CHECKPOINT_SWITCH.fullmatch(test.attr.value):
            return False
        flag = test.attr.value
        key = ("library", flag)  # not the key `getattr(cfg, flag, False)` keeps its answer under
        known = self._unset.get(key)
        if known is None:
            known = self._unset[key] = never_given_true(self.model, flag, {flag, "self." + flag}) and not self._turned_on_by_setter(flag)
        return known

    def _turned_on_by_setter(self, flag: str) -> bool:
        """The library's setter of ``flag`` (`set_grad_checkpointing(...)` for open_clip's and
        timm's `grad_checkpointing`) is called in this file or one near it."""
        setter = _CHECKPOINT_SETTERS.get(flag)
        if setter is None:
            return False
        if setter.search(self.model.text or ""):
            return True
        project = self.model.project
        if project is None or self.model.real_path is None:
            return False
        nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(self.model.real_path)}
        return any(
            os.path.normpath(os.path.abspath(path)) in nearby and setter.search(project.text_of(path))
            for path in project.files_containing("checkpointing")
        )

    def _key_left_out(self, test: cst.Call) -> bool:
        """`render_kwargs.get("render_depth", False)` where no file near this one gives the key a
        value other than a false one (as a dict key, a keyword or an attribute), and no config
        file of the project sets it. Not the environment's."""
        key, default = test.args[0].value, test.args[1].value
        if any(a.keyword is not None or a.star for a in test.args) or type(key) is not cst.SimpleString:
            return False
        name = key.evaluated_value
        if not isinstance(name, str) or not name.isidentifier() or not _false_constant(default):
            return False
        if (self.model.imports.qualify(test.func.value) or "").startswith("os."):
            return False  # `os.environ.get("DEBUG", False)`: a launch command may set it
        known = self._unset.get(("key", name))
        if known is None:
            project = self.model.project
            known = self._unset[("key", name)] = never_given_true(self.model, name, {name}) and (
                project is None or not project.sets_in_configs(name))
        return known

    def _config_key_absent(self, test: cst.Call) -> bool:
        owner, key = dotted_name(test.args[0].value), test.args[1].value
        if owner is None or type(key) is not cst.SimpleString or any(a.keyword is not None or a.star for a in test.args):
            return False
        name = key.evaluated_value
        parts = owner.split(".")
        if parts[0] == "self":
            parts = parts[1:]
        if not isinstance(name, str) or not name.isidentifier() or not parts or not _CONFIG_OBJECT.match(parts[0]):
            return False
        known = self._unset.get(name)
        if known is None:
            known = self._unset[name] = self._never_set(name)
        if not known:
            return False
        project = self.model.project
        return project is None or not project.sets_in_configs(".".join([*parts[1:], name]))

    def _never_set(self, name: str) -> bool:
        """No file of the project near this one sets the attribute or key ``name`` (once per name)."""
        assigned = re.compile(r"(\.%s\s*(=(?!=)|[-+*/|&]=)|\b%s\s*=(?!=))" % (name, name))
        keyed = re.compile(r"['\"]%s['\"]\s*[:,)]" % name)
        # `getattr(self.config, "name", False)` and `hasattr(cfg, "name")` themselves name the key
        # between quotes and a comma or a bracket.
        read = re.compile(r"(?:getattr\([^()]*,\s*['\"]%s['\"]\s*,|hasattr\([^()]*,\s*['\"]%s['\"]\s*\))" % (name, name))

        def sets(text: str) -> bool:
            # An attribute or keyword set outside text (a message that mentions
            # `config.name=True` sets nothing), or a dict key other than the reads themselves.
            return bool(assigned.search(_STRINGS.sub('""', text))) or len(keyed.findall(text)) > len(read.findall(text))

        if sets(self.model.text or ""):
            return False
        project = self.model.project
        if project is None or self.model.real_path is None:
            return True
        # Only the files this check depends on, so that a cached answer and a fresh one agree.
        nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(self.model.real_path)}
        for path in project.files_containing(name):
            if os.path.normpath(os.path.abspath(path)) in nearby and sets(project.text_of(path)):
                return False
        return True

    def _never_false(self, guard: Guard) -> bool:
        """An attribute flag whose every value, on every path, is true (`True`, a non-zero
        number): set from a parameter whose default is true and that no construction turns off."""
        name = dotted_name(guard.test)
        if name is None or not name.startswith("self."):
            return False
        found = literal_values(self.model, guard.test, guard.ctx, guard.order + 0.5)
        if not (found.complete and bool(found.values) and all(value for _, value in found.values)):
            return False
        # `self.overlap` set from `not opt.no_overlap`: true unless the run passes a switch that
        # no command the project ships passes (`launched_options.never_launched`).
        return found.option is None or never_launched(self.model, found.option)

    def _never_true(self, guard: Guard) -> bool:
        """An attribute flag whose every value, on every path, is false (`False`, `None`, `0`):
        set from a parameter whose default is false and that no construction passes; or such a
        parameter itself (`def loss(..., use_collision=False)` whose callers pass it nothing true);
        or, for a part of an `and` test, an attribute set only from such a default that nothing
        near this file turns on (`model/default_flags.py`). An `or` of such tests is never true
        when none of its parts is (`if reset_position_ids or reset_attention_mask:`)."""
        if type(guard.test) is cst.BooleanOperation and type(guard.test.operator) is cst.Or:
            return all(self._never_true(dataclasses.replace(guard, test=part))
                       for part in (guard.test.left, guard.test.right))
        if any(keeps_false_default(self.model, t, guard.ctx, guard.order + 0.5) or self._unset_attribute(t)
               or flash_attention_unasked(self.model, t) or module_setting_off(self.model, t)
               for t in conjuncts(guard.test)):
            return True
        if type(guard.test) is cst.Comparison and _tests_none(guard.test):
            return self._always_none(guard, guard.test.left)
        if type(guard.test) is cst.Comparison and self._unbound_local(guard):
            return True
        if type(guard.test) is cst.Comparison and _compares_to_a_string(guard.test):
            # `elif self.cond_mode == "uncond":` where every construction passes another mode
            name = dotted_name(guard.test.left)
            if name is not None and (name.startswith("self.") or "." not in name):
                found = literal_values(self.model, guard.test, guard.ctx, guard.order + 0.5)
                if (found.complete and found.option is None and bool(found.values)
                        and not any(value for _, value in found.values)):
                    return True
        if any(self._setting_left_off(t, guard) or self._option_left_off(t, guard) or self._read_left_off(t, guard)
               for t in conjuncts(guard.test)):
            return True
        name = dotted_name(guard.test)
        if name is None or not (name.startswith("self.") or "." not in name):
            return False
        found = literal_values(self.model, guard.test, guard.ctx, guard.order + 0.5)
        # A command-line option's default is what a run gets unless it asks otherwise: not never.
        return found.complete and found.option is None and bool(found.values) and not any(value for _, value in found.values)

    def _unbound_local(self, guard: Guard) -> bool:
        """`if "img_loss0" in locals():` in a function that never binds that name (it is only
        assigned in another function, a model's `forward`): never true."""
        test = guard.test
        if len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.In:
            return False
        container = test.comparisons[0].comparator
        if (type(test.left) is not cst.SimpleString or type(container) is not cst.Call or container.args
                or type(container.func) is not cst.Name or container.func.value != "locals"):
            return False
        function = guard.ctx.function
        if function is None or self.model.imports.qualify(container.func) is not None:
            return False
        name = test.left.evaluated_value
        if not isinstance(name, str) or not name.isidentifier():
            return False
        if name in function.params:
            return False
        # Any binding in the function, before or after the test (a loop's next pass sees it).
        return not self.model.facts.assignments.get((function.scope, name))

    def _setting_left_off(self, test: cst.BaseExpression, guard: Guard) -> bool:
        """`cfg.DETECTION.ENABLE`: a config node's setting whose default is false and that no
        config file of the project turns on (`config_nodes.left_off`)."""
        name = dotted_name(test)
        if name is None or name.startswith("self.") or name.count(".") < 2:
            return False
        found = literal_values(self.model, test, guard.ctx, guard.order + 0.5)
        return (found.complete and bool(found.values) and not any(value for _, value in found.values)
                and left_off(self.model, found.option))

    def _read_left_off(self, test: cst.BaseExpression, guard: Guard) -> bool:
        """`if cfg.use_adapted_weight:` of a config loaded from a file (`loaded_configs.py`),
        where every config file of the project that gives the key gives it a false value."""
        if type(test) is not cst.Attribute or type(test.value) is not cst.Name or test.value.value in ("self", "cls"):
            return False  # an object's own flag: `keeps_false_default` follows every store of it
        project = self.model.project
        found = literal_values(self.model, test, guard.ctx, guard.order + 0.5)
        return (project is not None and found.covered and bool(found.settings)
                and not any(value for _, value in found.values)
                and all(project.sets_only_false_in_configs(name) for name in found.settings))

    def _option_left_off(self, test: cst.BaseExpression, guard: Guard) -> bool:
        """`if args.use_aux:`, `if self.cfg.max_grad_norm > 0:`: a test of a command-line option
        that its default, and every value a launch script beside it passes, makes false, and
        that no command the project ships passes at all (`launched_options.never_launched`)."""
        if type(test) not in (cst.Attribute, cst.Comparison, cst.Name):
            return False
        found = literal_values(self.model, test, guard.ctx, guard.order + 0.5)
        return (found.complete and bool(found.values) and not any(value for _, value in found.values)
                and found.option is not None and never_launched(self.model, found.option))

    def _always_none(self, guard: Guard, tested: cst.BaseExpression) -> bool:
        """`if self.remap is not None:` where every construction leaves `remap` at its `None`
        default: the test of an optional feature nobody asks for. `0 is not None` holds, so
        only None itself counts."""
        name = dotted_name(tested)
        if name is None or not (name.startswith("self.") or "." not in name):
            return False
        found = literal_values(self.model, tested, guard.ctx, guard.order + 0.5)
        return found.complete and found.option is None and bool(found.values) and all(v is None for _, v in found.values)

    def every_pass_by_default(self, ctx: Context) -> bool:
        """Some guard around ``ctx`` tests a `%` whose every divisor is 1 unless the run asks
        otherwise (`if epoch % args.test_freq == 0 or ...:` with `--test-freq` defaulting to 1)."""
        return any(
            (guard.positive and not guard.exits)
            and _every_step(self.model, guard.test, guard.ctx, guard.order + 0.5, settings=True)
            for guard in guards_of(ctx)
        )

    def every_pass_unless_asked(self, ctx: Context) -> bool:
        """Some guard around ``ctx`` tests a `%` whose every divisor is exactly 1 unless the run
        asks otherwise (`if (step + 1) % args.gradient_accumulation_steps == 0:` with the option
        defaulting to 1, and no shipped command passing another value): no accumulation."""
        return any(
            (guard.positive and not guard.exits)
            and _every_step(self.model, guard.test, guard.ctx, guard.order + 0.5, settings=True, allowed=frozenset({1}))
            for guard in guards_of(ctx)
        )

    def periodic(self, ctx: Context, within: Optional[set] = None) -> bool:
        """Some guard around ``ctx`` holds on some iterations only (`if epoch % 5 == 0:`, not a
        rank test): what runs under it runs every few passes, not every pass. With ``within``
        (loop ids), only a guard tested in the body of one of those loops counts (a test of the
        epoch loop, not one of a batch loop inside it)."""
        for guard in guards_of(ctx):
            if not (guard.positive or guard.exits) or (self._steps(guard) and not self._steps_elsewhere(guard)):
                continue
            if within is not None and (guard.ctx.loop is None or id(guard.ctx.loop) not in within):
                continue
            if self.test_kinds(guard.test, guard.ctx, guard.order + 0.5)[0] or self._rare(guard):
                return True
        return False

    def gated(self, ctx: Context, ranks: bool = True) -> bool:
        """Some guard around ``ctx`` gates it (see `gates`). With ``ranks`` False a rank test
        alone does not: for a host sync, rank 0's wait is every step's wait on one GPU, and the
        other ranks wait for rank 0 at the next collective."""
        key = id(ctx) if ranks else -id(ctx)
        known = self._contexts.get(key)
        if known is None:
            known = self._contexts[key] = any(self.gates(g, ranks) for g in guards_of(ctx)) or self._recovering(ctx)
        return known

    def after_rare_paths(self, site) -> bool:
        """The call sits in its function after a top-level `if` every way through which passes
        a test that holds now and then: kohya's `sample_images(...)`, which returns unless
        `steps == 0` (and sampling at the first step is asked for) or, in its `else`, unless
        `steps % args.sample_every_n_steps == 0`. Each way out of the `if` statement is followed
        through its arms, their nested `if`s and early `return`s (a few dozen ways at most)."""
        info = site.ctx.function
        if info is None:
            return False
        if id(info) not in self._rare_after:
            self._rare_after[id(info)] = self._first_rare_row(info)
        row = self._rare_after[id(info)]
        return row is not None and self.model.line_of(site.node) >= row

    def _first_rare_row(self, info) -> Optional[int]:
        body = info.node.body
        if type(body) is not cst.IndentedBlock or info.body_ctx is None:
            return None
        statements = body.body
        for index, statement in enumerate(statements[:-1]):
            if type(statement) is not cst.If or statement.orelse is None or not _returns_within(statement):
                # With no `return` in it, what follows always runs; a lone `if x: return` is
                # a guard of what follows already (model/builder.py).
                continue
            ways = _ways_through([statement], 0)
            if not ways or any(not any(self._rare_condition(test, truth, info) for test, truth in way) for way in ways):
                continue
            return self.model.line_of(statements[index + 1])
        return None

    def _rare_condition(self, test: cst.BaseExpression, truth: bool, info) -> bool:
        """Passing the test with this outcome happens only now and then (a modulo test, a first
        step), as a guard of that outcome would gate."""
        ctx, order = info.body_ctx, self.model.order_of(test)
        guard = Guard(test, True, ctx, order) if truth else Guard(test, False, ctx, order, exits=True)
        return self.gates(guard, ranks=False)

    def _recovering(self, ctx: Context) -> bool:
        """``ctx`` is in a handler of a failed step (out of GPU memory, a non-finite loss): it
        runs on the steps that failed only."""
        handlers = self.model.facts.failure_handlers
        if not handlers:
            return False
        current: Optional[Context] = ctx
        while current is not None:
            if id(current) in handlers:
                return True
            current = current.outer
        return False


def _plain_stores(model) -> Dict[str, list]:
    """The file's stores of an attribute of something other than `self`, by attribute name
    (`args.save_logs = ...` in `main()`), for reads of that attribute through a parameter."""
    def index(m):
        out: Dict[str, list] = {}
        for (_, target), found in m.facts.assignments.items():
            parts = target.split(".")
            if len(parts) == 2 and parts[0] not in ("self", "cls"):
                out.setdefault(parts[1], []).extend(a for a in found if a.index is None and not a.augmented)
        return out
    return model.shared("plain-attribute-stores", index)


# Attributes a test reads that are states of the run, not options someone turns on.
_STATE_ATTRIBUTES = frozenset({"training", "requires_grad", "is_cuda", "is_leaf"})


# A name that holds an optimizer: `optimizer`, `actor_optim`, `opt_g`, `d_opt`.
_OPTIMIZER_NAME = re.compile(r"(?i)optim|(?:^|[._])opt(?:[._]|$)|(?:^|[._])opt_|_opt$")


def _on_model_config(part: cst.BaseExpression) -> bool:
    """The flag is read from a model's config object (`self.config.gradient_checkpointing`,
    `getattr(config, "gradient_checkpointing", False)`), not from the module or the run's options."""
    owner = part.value if type(part) is cst.Attribute else (
        part.args[0].value if type(part) is cst.Call and type(part.func) is cst.Name and part.args else None)
    name = dotted_name(owner) if owner is not None else None
    return name is not None and name.rsplit(".", 1)[-1] == "config"


def _flag_name(part: cst.BaseExpression) -> Optional[str]:
    """The option a conjunct of a test reads as a plain flag, if it is one."""
    if type(part) is cst.Attribute:
        return None if part.attr.value in _STATE_ATTRIBUTES else part.attr.value
    if type(part) is cst.Name:
        return None if part.value in ("True", "False", "None") else part.value
    if type(part) is not cst.Call:
        return None
    func = part.func
    if type(func) is cst.Name and func.value == "getattr":
        index = 1  # `getattr(config, "gradient_checkpointing", False)`
    elif type(func) is cst.Attribute and func.attr.value == "get":
        index = 0  # `cfg.get("with_cp", False)`
    else:
        return None
    if len(part.args) <= index or type(part.args[index].value) is not cst.SimpleString:
        return None
    value = part.args[index].value.evaluated_value
    return value if isinstance(value, str) and value.isidentifier() else None


def _holds(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """``node`` is ``tree`` or inside it (a small subtree: one arm of an expression)."""
    stack = [tree]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(children(current))
    return False


def _is_none_test(test: cst.BaseExpression) -> bool:
    """`x is None` (one comparison)."""
    return (type(test) is cst.Comparison and len(test.comparisons) == 1
            and type(test.comparisons[0].operator) is cst.Is and _is_none(test.comparisons[0].comparator))


def _true_only_when_periodic(model, info, depth: int) -> bool:
    """Every `return True` of the helper sits under a periodic test of its own, and every other
    return gives False (`def check_frequency(self, idx): if idx % self.freq == 0: return True;
    return False`; `if step - self.last_written[tag] >= interval: ...; return True`)."""
    found = False
    for site in info.return_sites:
        value = site.value
        if type(value) is cst.Name and value.value == "False":
            continue
        if not (type(value) is cst.Name and value.value == "True"):
            return False
        if not any(guard.positive and not guard.exits
                   and (model.guards.test_kinds(guard.test, guard.ctx, guard.order + 0.5, depth + 1)[0]
                        or occasional(guard.test, True))
                   for guard in guards_of(site.ctx)):
            return False
        found = True
    return found


INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


def launch_tests(model) -> FrozenSet[str]:
    """The tests (as written, spaces and outer brackets aside) whose true arm starts the process
    group (`if parallel == True:` around `init_process_group(...)`): wherever the same test is
    false, the script runs as one process (`else: loader = DataLoader(ds, shuffle=True)`,
    `else: trainer.save()`)."""
    return model.shared("launch-tests", _launch_tests)


def _launch_tests(model) -> FrozenSet[str]:
    found = set()
    for site in model.calls_to(INIT_PROCESS_GROUP):
        guard = next((g for g in guards_of(site.ctx) if g.ctx.function is site.ctx.function), None)
        if guard is not None and guard.positive and not guard.exits:
            found.add(spelled(model, guard.test))
    return frozenset(found)


def spelled(model, test: cst.BaseExpression) -> str:
    return "".join(model.code(test).split()).strip("()")

