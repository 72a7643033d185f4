"""GPU504 `checkpoint-saved-on-every-rank`: `torch.save` in a DDP script without a rank-0 guard."""

from __future__ import annotations
import re
from typing import Iterator, List, Tuple
import libcst as cst
from advisor.findings import Severity
from advisor.model.world_size_tests import single_process_only
from advisor.model import Context, FileModel, FunctionInfo
from advisor.model.builder import gate_kinds
from advisor.model.names import dotted_name, last_segment
from advisor.model.subtree import contains
from advisor.model.walk import children
from advisor.rules.base import Report, Rule
from advisor.rules.distributed.ddp_script import RANK_WORD, as_single_process, is_ddp_script
from advisor.model.mentions import mentions
from advisor.model.guards import every_call_path
from advisor.model.framework_steps import untaken_by
from advisor.model.file_model import call_argument
from advisor.model.cli_options import is_parse_result


_MAIN_ONLY_DECORATOR = re.compile(r"rank_zero|rank0|main_process|master_only|main_only", re.IGNORECASE)


def _exits(body: cst.BaseSuite) -> bool:
    """The block only leaves the function: `return`, `return None`, `sys.exit()`."""
    statements = body.body
    if len(statements) != 1:
        return False
    first = statements[0]
    small = first.body if type(first) is cst.SimpleStatementLine else (first,)
    if len(small) != 1:
        return False
    stmt = small[0]
    if type(stmt) is cst.Return:
        return True
    return type(stmt) is cst.Expr and type(stmt.value) is cst.Call and last_segment(dotted_name(stmt.value.func)) == "exit"


def _not_main_test(test: cst.BaseExpression) -> bool:
    """`rank != 0`, `not is_main_process()`, `dist.get_rank() > 0`, `if local_rank:`: true off rank 0."""
    if not gate_kinds(test)[1]:
        return False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return True
    if type(test) is cst.Comparison:
        return all(
            type(c.operator) in (cst.NotEqual, cst.GreaterThan, cst.NotIn, cst.IsNot) for c in test.comparisons
        )
    if type(test) in (cst.Name, cst.Attribute, cst.Call):
        name = last_segment(dotted_name(test.func if type(test) is cst.Call else test))
        return "rank" in name.lower()  # a rank number is truthy off rank 0
    return False


_DEVICE_INDEX = re.compile(r"(^|_)(gpu|gpu_id|device_id|rank)$", re.IGNORECASE)


def _zero_test(test: cst.BaseExpression) -> bool:
    """`gpu == 0`, `args.gpu in (0, -1)`, `device_id <= 0`: the first device of an `mp.spawn` worker."""
    if type(test) is cst.BooleanOperation:
        return _zero_test(test.left) or _zero_test(test.right)
    if not type(test) is cst.Comparison or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    if not type(comparison.operator) in (cst.Equal, cst.In, cst.LessThanEqual):
        return False
    left, right = test.left, comparison.comparator
    if last_segment(dotted_name(right)) and not last_segment(dotted_name(left)):
        left, right = right, left
    if not _DEVICE_INDEX.search(last_segment(dotted_name(left))):
        return False
    values = [e.value for e in right.elements] if type(right) in (cst.Tuple, cst.List, cst.Set) else [right]
    return any(type(v) is cst.Integer and v.value == "0" for v in values)


def _under_zero_test(info: FunctionInfo, target: cst.CSTNode) -> bool:
    """Inside the body of an `if gpu == 0:` in the function (walks that function's body only)."""
    stack: List[Tuple[cst.CSTNode, bool]] = [(info.node.body, False)]
    while stack:
        node, guarded = stack.pop()
        if node is target:
            return guarded
        if type(node) is cst.If:
            stack.append((node.body, guarded or _zero_test(node.test)))
            if node.orelse is not None:
                stack.append((node.orelse, guarded))
            continue
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend((child, guarded) for child in children(node))
    return False


def _main_only_before(info: FunctionInfo, target: cst.CSTNode) -> bool:
    """The function returns early off rank 0 (`if rank != 0: return`) before the statement that
    holds ``target``; or a main-process-only decorator (`@rank_zero_only`) wraps it."""
    if any(_MAIN_ONLY_DECORATOR.search(d) for d in info.decorators):
        return True
    body = info.node.body
    if not type(body) is cst.IndentedBlock:
        return False
    for statement in body.body:
        if type(statement) is cst.If and statement.orelse is None and _not_main_test(statement.test):
            if _exits(statement.body):
                return True
        if contains(statement, target):
            return False
    return False


class CheckpointSavedOnEveryRank(Rule):
    code = "GPU504"
    name = "checkpoint-saved-on-every-rank"
    summary = "`torch.save` in a DDP script without a rank-0 guard"
    what = """
        `torch.save(...)` in a file that builds a `DistributedDataParallel` model or calls
        `init_process_group`, when neither the call nor every path of calls that runs it (up
        to three calls up) sits under a rank-0 test (`if rank == 0`,
        `if dist.get_rank() == 0`, `if is_main_process()`, `if args.local_rank in (-1, 0)`, a
        Hugging Face Trainer's `if self.args.should_save:`, which holds on the main process only):
        an upload helper called only from a `_save_snapshot` that is called only under
        `if self.local_rank == 0:` is guarded. Nor when the saving function returns early
        off rank 0 (`if rank != 0: return`) or carries a `@rank_zero_only`-style decorator; an `if gpu == 0:` around the save in an
        `mp.spawn` worker also counts, and so does a flag bound to a rank test (`args.save_logs =
        args.logs and is_master(args)`, then `if args.save_logs:`, also in a helper handed
        `args` when every store of that attribute in the file is such a test; `default_gpu = True` set only
        under `if rank == 0:` or in the single-process `else` of `if args.local_rank != -1:`), and so does an early return
        on a value only rank 0 is handed (`if self.save_path is None: return`, where only the
        rank-0 branch passes a path). A save whose path names the
        rank (one file per rank, as sharded checkpoints do), one into an in-memory buffer
        (`torch.save(state, io.BytesIO())`: no file), one of the run's parsed options (`torch.save(args,
        "run_args.bin")`: a few hundred bytes, no checkpoint), and one that runs only in a run of
        one process (after `if dist.get_world_size() != 1: raise ...`, under `if world_size
        == 1:`, or in the `else` of the test whose true arm calls `init_process_group`, written
        the same way: `if parallel == True:`), are left alone. A function `mp.spawn` runs has a
        path with no guard, whatever guards its direct calls. Reported as information when the
        saving function (other than `main`) has no call site in the file.
        All of it is information when every DDP wrap and process-group start of the file sits
        under a switch no documented run turns on (the `else` of `if args.local_rank == -1:`
        in a script every shipped command starts with plain `python`).
    """
    why = """
        Each process runs the save. With N ranks, N processes serialise the same weights and
        write the same path at the same moment: N times the I/O, a slower step, and a file
        that can end up truncated or mixed when two writers overlap on a shared filesystem.
    """
    example = """
        for epoch in range(epochs):
            train_one_epoch(model, loader, optimizer)
            torch.save(model.module.state_dict(), "checkpoint.pt")
    """
    instead = """
        for epoch in range(epochs):
            train_one_epoch(model, loader, optimizer)
            if dist.get_rank() == 0:
                torch.save(model.module.state_dict(), "checkpoint.pt")
            dist.barrier()  # others wait before reading it
    """
    hint = "save on rank 0 only (`if dist.get_rank() == 0:`), then `dist.barrier()` if others read the file"
    fix_safety = """
        No automatic fix. A rank-0 guard needs the rank (from `dist.get_rank()`, an environment
        variable or an argument), and usually a `dist.barrier()` before other ranks read the
        file; where those go depends on the script.
    """
    references = (
        (
            "Getting started with distributed data parallel: save and load checkpoints",
            "https://docs.pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints",
        ),
        ("torch.distributed", "https://docs.pytorch.org/docs/stable/distributed.html"),
    )
    requires = (("save",), ("DistributedDataParallel", "init_process_group"))

    def check(self, model: FileModel) -> Iterator[Report]:
        # A DDP mode no documented run starts: the same reports, as information.
        yield from as_single_process(model, self._reports(model))

    def _reports(self, model: FileModel) -> Iterator[Report]:
        if not is_ddp_script(model):
            return
        for site in model.calls_to("torch.save"):
            if self._guarded(model, site.ctx, site.node):
                continue
            if any(mentions(model, arg.value, site.ctx, RANK_WORD, 1) for arg in site.node.args[1:]):
                continue  # one file per rank
            if _in_memory(model, site):
                continue  # `torch.save(state, io.BytesIO())`: a copy in memory, no file
            saved = call_argument(site.node, "obj", 0)
            if saved is not None and is_parse_result(model, saved.value, site.ctx, site.order):
                continue  # `torch.save(args, "run_args.bin")`: the options, a few hundred bytes
            info = site.ctx.function
            severity = None
            if info is not None:
                if every_call_path(model, info, self._guarded,
                                   skip=lambda caller: untaken_by(model, site.ctx, info, caller)):
                    continue
                if not model.call_sites(info) and info.node.name.value != "main":
                    severity = Severity.INFO  # who calls it, and how guarded, is out of sight
            yield self.report(
                site.node,
                "`torch.save` runs on every rank of this DDP script: each process writes the same "
                "checkpoint",
                severity=severity,
            )

    def _guarded(self, model: FileModel, ctx: Context, node: cst.CSTNode) -> bool:
        if ctx.rank_gated or model.guards.rank_only(ctx) or single_process_only(ctx, model):
            return True
        info = ctx.function
        if info is None:
            return False
        return _main_only_before(info, node) or (ctx.conditional and _under_zero_test(info, node))


_MEMORY_FILES = frozenset({"io.BytesIO", "io.StringIO"})


def _in_memory(model: FileModel, site) -> bool:
    """The file argument is an in-memory buffer: `io.BytesIO()`, or a name bound only to one."""
    target = call_argument(site.node, "f", 1)
    if target is None:
        return False
    value = target.value
    if type(value) is cst.Name:
        binding = model.sole_assignment(value.value, site.ctx, site.order)
        if binding is None:
            return False
        value = binding.value
    return type(value) is cst.Call and model.imports.qualify(value.func) in _MEMORY_FILES
