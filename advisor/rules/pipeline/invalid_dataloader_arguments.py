"""GPU205 `invalid-dataloader-arguments`: DataLoader arguments that raise `ValueError` when the loader is built."""

from __future__ import annotations
from typing import Any, Dict, Iterator, Tuple
import libcst as cst
from advisor.findings import Fixable, Severity
from advisor.model import CallSite, FileModel
from advisor.model.file_model import call_argument, literal_bool
from advisor.model.names import DATALOADER, dotted_name, is_none
from advisor.rules.base import FixSpec, NodeEdit, Report, Rule
from advisor.model.call_options import ABSENT, PRESENT, call_option
from advisor.rules.pipeline.loader_flow import iterable_dataset, literal_int
from advisor.rules.pipeline.loader_literals import loader_options


def _known_object(model: FileModel, expr: cst.BaseExpression, ctx) -> bool:
    """The value is an object for sure, never None: a class instantiated (`RandomSampler(ds)`),
    or a name bound only to such calls. A helper function may return None: not known."""
    if type(expr) is cst.Call:
        name = dotted_name(expr.func) or ""
        return name.rsplit(".", 1)[-1][:1].isupper()
    name = dotted_name(expr)
    if name is None:
        return False
    found = model.assignments(name, ctx)
    return bool(found) and all(
        a.value is not None and a.index is None and _known_object(model, a.value, a.ctx) for a in found
    )


def _drop_arg_edits(call: cst.Call, arg: cst.Arg) -> Tuple[NodeEdit, ...]:
    """Edits that remove one argument with its separator, keeping the layout (and the comments)
    of the others: an argument on a line of its own takes its line with it.

    A whitespace node that starts a new line also holds the block's indentation, so lines are
    removed whole (the newline and the indentation that follows it), never in part."""
    args = list(call.args)
    i = next(k for k, a in enumerate(args) if a is arg)
    last = i == len(args) - 1
    before = call.whitespace_before_args if i == 0 else args[i - 1].comma.whitespace_after
    edits = [NodeEdit(arg, "")]

    def drop(node: cst.CSTNode) -> None:
        if not (type(node) is cst.SimpleWhitespace and not node.value):
            edits.append(NodeEdit(node, ""))

    def commented(node) -> bool:
        return type(node) is cst.ParenthesizedWhitespace and node.first_line.comment is not None

    comma = arg.comma
    if type(comma) is cst.Comma:
        drop(comma)
        after = comma.whitespace_after
        own_line = type(before) is cst.ParenthesizedWhitespace
        if commented(after):
            drop(after.first_line.whitespace)  # its comment stays, on a line of its own
        elif own_line and last and not commented(before):
            drop(before)  # `,\n    arg,\n)`: the line break before the argument goes
        elif own_line and type(after) is cst.ParenthesizedWhitespace:
            drop(after)  # the line break after it goes; the next line keeps its indentation
        elif type(after) is cst.SimpleWhitespace and after.value and not last:
            drop(after)
        elif type(before) is cst.SimpleWhitespace:
            drop(before)
    elif i > 0:
        drop(args[i - 1].comma)
        if not commented(before):
            drop(before)
        elif type(arg.whitespace_after_arg) is cst.ParenthesizedWhitespace:
            drop(arg.whitespace_after_arg)
    return tuple(edits)


class InvalidDataLoaderArguments(Rule):
    code = "GPU205"
    name = "invalid-dataloader-arguments"
    severity = Severity.ERROR
    summary = "DataLoader arguments that raise `ValueError` when the loader is built"
    what = """
        Literal argument combinations that `DataLoader.__init__` rejects: `prefetch_factor`
        or `persistent_workers=True` without worker processes (`num_workers` absent or 0);
        `shuffle=True` together with a `sampler`; `batch_sampler` together with `batch_size`
        (other than 1), `shuffle=True`, `sampler` or `drop_last=True`; `shuffle=True` for a
        dataset derived from `IterableDataset`; a negative `num_workers`. A worker count the
        analysis can read (a constant, a settings object, a `**kwargs` dict) counts as written;
        one that is the default of a command-line option and is 0 makes `prefetch_factor` and
        `persistent_workers=True` a warning without a fix (the run raises unless it asks for
        workers). Other values given as variables, and samplers that may be `None`, are not
        judged.
    """
    why = """
        These raise as soon as the script builds the loader, often only on the path that was
        not tried locally (a `--workers 0` debug run, the distributed branch that adds a
        sampler), after the model and data have already been loaded.
    """
    example = """
        sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=64, shuffle=True, sampler=sampler)
    """
    instead = """
        sampler = DistributedSampler(train_set)  # shuffles itself (shuffle=True is its default)
        loader = DataLoader(train_set, batch_size=64, sampler=sampler)
    """
    hint = "drop the conflicting argument: the sampler or batch sampler decides order and batch size"
    fixable = Fixable.SOMETIMES_SAFE
    fix_safety = """
        The fix removes the argument that conflicts (or turns a positional `True` into `False`):
        `shuffle` next to a sampler, `prefetch_factor` or `persistent_workers` without workers,
        `batch_size` or `drop_last` next to a batch sampler. As written the script raises
        `ValueError` when it builds the loader, so no working behaviour is changed. It assumes
        the remaining argument says what the author meant: the sampler decides the order and the
        batch sampler the batches. Code that expected the `ValueError` (a `try` around the
        construction) would now take the other path.

        Not offered for a negative `num_workers` or for a `sampler` next to a `batch_sampler`:
        which value is right is the author's decision.
    """
    references = (
        ("torch.utils.data.DataLoader", "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader"),
        (
            "torch/utils/data/dataloader.py: the argument checks in `DataLoader.__init__`",
            "https://github.com/pytorch/pytorch/blob/main/torch/utils/data/dataloader.py",
        ),
    )
    requires = (("DataLoader",),)  # shuffle, sampler and num_workers may all be positional

    def check(self, model: FileModel) -> Iterator[Report]:
        for site in model.calls_to(DATALOADER):
            if any(a.star == "*" for a in site.node.args):
                continue  # positions unknown
            yield from self._check_call(model, site)

    def _check_call(self, model: FileModel, site: CallSite) -> Iterator[Report]:
        call = site.node
        option = call_option(model, site, "num_workers", 5)
        counts = (0,) if option.state == ABSENT else (option.literals.ints() if option.state == PRESENT else None)
        workers = counts[0] if counts is not None and len(counts) == 1 else None
        if workers is not None and workers < 0 and option.arg is not None and option.literals.option is None:
            yield self.report(option.arg, "`{argument}` must not be negative: DataLoader raises `ValueError`",
                              data={"argument": "num_workers", "loader_options": loader_options(call)})
        if workers == 0 and option.state == PRESENT and option.literals.option is not None:
            yield from self._needs_workers_by_default(call, option.literals.option)
        elif workers == 0:
            prefetch = call_argument(call, "prefetch_factor", None)
            value = literal_int(prefetch.value) if prefetch is not None else None
            if value is not None and not (model.torch_version < (2, 0) and value == 2):
                yield self._drop(
                    call,
                    prefetch,
                    "`{argument}` needs worker processes (`num_workers` > 0): DataLoader raises `ValueError`",
                    {"argument": "prefetch_factor"},
                )
            persistent = call_argument(call, "persistent_workers", None)
            if persistent is not None and literal_bool(persistent.value) is True:
                yield self._drop(
                    call,
                    persistent,
                    "`{argument}` needs `num_workers` > 0: DataLoader raises `ValueError`",
                    {"argument": "persistent_workers=True"},
                )
        shuffle = call_argument(call, "shuffle", 2)
        shuffles = shuffle is not None and literal_bool(shuffle.value) is True
        sampler = call_argument(call, "sampler", 3)
        has_sampler = sampler is not None and _known_object(model, sampler.value, site.ctx)
        batch_sampler = call_argument(call, "batch_sampler", 4)
        if batch_sampler is not None and _known_object(model, batch_sampler.value, site.ctx):
            reason = "`{argument}` is mutually exclusive with `{conflicts_with}`: DataLoader raises `ValueError`"
            size = call_argument(call, "batch_size", 1)
            if size is not None and (is_none(size.value) or (literal_int(size.value) not in (None, 1))):
                yield self._drop(call, size, reason, {"argument": "batch_size", "conflicts_with": "batch_sampler"})
            if shuffles:
                yield self._drop(call, shuffle, reason, {"argument": "shuffle=True", "conflicts_with": "batch_sampler"})
            if has_sampler:
                yield self.report(sampler, reason, data={"argument": "sampler", "conflicts_with": "batch_sampler",
                                                         "loader_options": loader_options(call)})
            drop_last = call_argument(call, "drop_last", 8)
            if drop_last is not None and literal_bool(drop_last.value) is True:
                yield self._drop(call, drop_last, reason, {"argument": "drop_last=True", "conflicts_with": "batch_sampler"})
        elif shuffles and has_sampler:
            yield self._drop(call, shuffle, "`{argument}` with a `{conflicts_with}`: DataLoader raises `ValueError`",
                             {"argument": "shuffle=True", "conflicts_with": "sampler"})
        elif shuffles and iterable_dataset(model, site):
            yield self._drop(call, shuffle, "`{argument}` for an `IterableDataset`: DataLoader raises `ValueError`",
                             {"argument": "shuffle=True"})

    def _needs_workers_by_default(self, call: cst.Call, default_of: str) -> Iterator[Report]:
        """`num_workers` is an option whose default is 0: the run raises unless the user asks for
        workers. The fix would break the runs that do, so none is offered."""
        prefetch = call_argument(call, "prefetch_factor", None)
        persistent = call_argument(call, "persistent_workers", None)
        conflicts = []
        if prefetch is not None and literal_int(prefetch.value) is not None:
            conflicts.append((prefetch, "prefetch_factor"))
        if persistent is not None and literal_bool(persistent.value) is True:
            conflicts.append((persistent, "persistent_workers=True"))
        for arg, argument in conflicts:
            yield self.report(
                arg,
                "`{argument}` needs worker processes, and `{default_of}` defaults to 0: DataLoader raises "
                "`ValueError` unless the run asks for workers",
                severity=Severity.WARNING,
                data={"argument": argument, "default_of": default_of, "loader_options": loader_options(call)},
            )

    def _drop(self, call: cst.Call, arg: cst.Arg, message: str, data: Dict[str, Any]) -> Report:
        if arg.keyword is not None:
            fix = FixSpec(f"remove `{arg.keyword.value}=`", _drop_arg_edits(call, arg))
        elif literal_bool(arg.value) is True:
            fix = FixSpec("pass `False`", (NodeEdit(arg.value, "False"),))
        else:
            fix = None
        return self.report(arg, message, fix=fix, data=dict(data, loader_options=loader_options(call)))
