"""From text to findings: pre-filter, one parse, one model, every rule, then positions and noqa."""

from __future__ import annotations

import ast
import bisect
from dataclasses import replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from advisor import old_syntax
from advisor.budget import BudgetExceeded, checkpoint, run_bounded
from advisor.chunked import ChunkCache, ChunkedModule, parse_chunked
from advisor.collector import collector_paused
from advisor.project.layout import LISTING
from advisor.config import DEFAULT_CONFIG, Config
from advisor.guards import nesting_problem
from advisor.findings import Edit, FileProblem, FileResult, Finding, Fix, Position, Related, Severity
from advisor.limits import FileTooLarge, NotRegularFile, over_budget, read_regular, text_too_large, too_large
from advisor.model import FileModel, open_questions
from advisor.model.broken_calls import stops_at_start
from advisor.model.broken_imports import unimportable
from advisor.model.self_tests import self_test_nodes
from advisor.model.unbuilt_classes import unbuilt_class_rows
from advisor.noqa import is_suppressed
from advisor.positions import Span, node_spans
from advisor.project.view import Views, project_view
from advisor.rules import ALL_RULES
from advisor.rules.base import NodeEdit, Report, Rule
from advisor.source import DecodeError, decode_source, split_lines
from advisor.trusted_parse import parse_module

class _Positions:
    """Turns nodes into 1-based positions; computed only for files with reports and, in a
    chunked file, only for the statements that hold them (``Chunk.span``)."""

    def __init__(self, model: FileModel, text: str, chunked: Optional[ChunkedModule]) -> None:
        self._model = model
        self._module = model.module
        self._chunked = chunked
        self._spans: Optional[Dict[int, Span]] = None
        self._lines = split_lines(text)
        self._newline = "\r\n" if "\r\n" in text else ("\r" if "\r" in text and "\n" not in text else "\n")

    def _span(self, node: cst.CSTNode, near: Optional[cst.CSTNode]) -> Span:
        if self._chunked is not None:
            try:
                return self._chunked.span(node, near, self._model.statement_of, self._model.top_of)
            except KeyError:  # a node under no statement (the module itself): the whole file
                if not self._chunked.prints_text:
                    return (1, 0), (1, 0)
        if self._spans is None:
            self._spans = node_spans(self._module)
        return self._spans[id(node)]

    def holds(self, node: cst.CSTNode) -> bool:
        """The node is part of this file's tree (it has a place in it)."""
        try:
            self._span(node, None)
        except KeyError:
            return False
        return True

    # ``near``: the finding's own node, for nodes it names near it (a fix's comma or
    # whitespace, a related statement) that positions are looked up beside.
    def start(self, node: cst.CSTNode, near: Optional[cst.CSTNode] = None) -> Position:
        line, column = self._span(node, near)[0]
        return Position(line, column + 1)

    def end(self, node: cst.CSTNode, near: Optional[cst.CSTNode] = None) -> Position:
        line, column = self._span(node, near)[1]
        return Position(line, column + 1)

    def edit(self, spec: NodeEdit, near: cst.CSTNode) -> Edit:
        content = spec.content
        if spec.align is not None:
            content = content.replace("\n", self._newline + self._column_of(spec.align, near))
        if spec.where == "before":
            start = self.start(spec.node, near)
            return Edit(start, start, content)
        if spec.where == "after":
            end = self.end(spec.node, near)
            return Edit(end, end, content)
        if spec.where == "line_before":
            start = self.start(spec.node, near)
            line = self._lines[start.row - 1]
            indent = line[: start.column - 1]
            return Edit(start, start, f"{spec.content}{self._newline}{indent}")
        return Edit(self.start(spec.node, near), self.end(spec.node, near), content)

    def _column_of(self, node: cst.CSTNode, near: cst.CSTNode) -> str:
        """Whitespace that reaches the column where ``node`` starts (its line's tabs kept)."""
        start = self.start(node, near)
        before = self._lines[start.row - 1][: start.column - 1]
        return "".join(c if c == "\t" else " " for c in before)


def _finding(report: Report, positions: _Positions, filename: str, docs_url: Optional[str] = None) -> Finding:
    rule = report.rule
    fix = None
    if report.fix is not None:
        fix = Fix(
            message=report.fix.message,
            edits=tuple(positions.edit(e, report.node) for e in report.fix.edits),
            applicability=report.fix.applicability,
        )
    related = tuple(
        Related(label, positions.start(node, report.node), positions.end(node, report.node))
        for node, label in report.related
    )
    return Finding(
        code=rule.code,
        name=rule.name,
        message=report.message({r.label: r.start.row for r in related}),
        severity=report.severity,
        start=positions.start(report.node),
        end=positions.end(report.node),
        url=rule.url_for(docs_url),
        hint=report.finding_hint(),
        fix=fix,
        filename=filename,
        data=report.data,
        related=related,
    )


def active_rules(config: Config, path: Optional[Path], rules: Sequence[Rule] = ALL_RULES) -> List[Rule]:
    return [rule for rule in rules if config.is_enabled(rule.code, path)]


def check_source(
    text: str,
    filename: str = "<stdin>",
    config: Config = DEFAULT_CONFIG,
    rules: Optional[Sequence[Rule]] = None,
    path: Optional[Path] = None,
    chunks: Optional[ChunkCache] = None,
    cancelled: Optional[Callable[[], bool]] = None,
    views: Optional[Views] = None,
    keep: Optional[List[object]] = None,
    part: bool = False,
) -> FileResult:
    """Checks one file's text. Problems (syntax errors, ...) come back in ``problem``.

    ``chunks`` keeps parsed top-level statements between calls for one document (the language
    server passes one per open file), so that only changed statements are parsed again. With a
    ``path``, the file is checked in its project (advisor/project): its imports and importers
    are read as needed. The analysis stops once it has used ``config.analysis_budget`` seconds
    of CPU time (a ``LimitProblem`` then says so), or raises ``budget.Cancelled`` once
    ``cancelled()`` is true; ``chunks`` must then be dropped: the statements it holds may be
    half updated. ``views`` holds the project views to check it in (the language server keeps
    its own, with the editor's unsaved texts); by default, this process's. ``keep``, a list,
    receives the file's model, so that the caller decides when it is freed (the language server
    frees it after publishing the findings). ``part``: the text is part of the file at ``path``
    (the language server's re-analysis of what an edit can reach, lsp/chunk_edits.py): it is
    checked in the file's project, but does not stand for the file there."""
    result = FileResult(filename)
    view = None
    if path is not None:
        build = _neighbour_builder(config)
        named = config.project_roots
        view = views.view(str(path), build, named) if views is not None else project_view(str(path), build, named)
    if view is not None:
        # The project's list of files too: a module added or removed may change what this file's
        # findings are (a new script that imports it), though no file it depended on changed.
        result.dependencies = tuple(dict.fromkeys(
            view.checked_against(str(path)) + view.folder_dependencies(str(path)))) + (LISTING + view.layout.root,)
    chosen = rules if rules is not None else active_rules(config, path)
    candidates = [r for r in chosen if _applies(r, text, view, path)]
    if not candidates:
        return result  # no rule can fire: the file is not even parsed
    size = text_too_large(text, config.max_file_size)
    if size:
        result.problem = too_large(filename, size, config.max_file_size)
        return result
    refused = nesting_problem(text)
    if refused is not None:
        result.problem = FileProblem(filename, *refused)
        return result
    # Syntax trees hold no cycles (nodes have no parent links): they go by reference counting.
    try:
        with collector_paused():
            outcome = run_bounded(lambda: _analyse(text, filename, candidates, config, chunks, view, path, keep, part),
                                  config.analysis_budget, cancelled)
    except BudgetExceeded:
        result.problem = over_budget(filename, config.analysis_budget)
        return result
    if isinstance(outcome, FileProblem):
        result.problem = outcome
    else:
        result.findings = _visible(outcome, text, config)
    return result


def _applies(rule: Rule, text: str, view, path: Optional[Path]) -> bool:
    """The rule's required text is in the file; in a project, every group but the first (the
    rule's own pattern) may be in a file it imports or that imports it (the training loop, the
    CUDA device)."""
    groups = rule.requires
    if not groups or all(any(s in text for s in group) for group in groups):
        return True
    if view is None or not any(s in text for s in groups[0]):
        return False
    # Three imports away: a loader built in `data/custom_loader.py`, handed out by
    # `data/data_loader.py`, gone over by `train.py`, whose model module names the device.
    related = view.related_texts(str(path), hops=3)
    return all(any(s in text or any(s in other for other in related) for s in group) for group in groups[1:])


def _parse(text: str, filename: str, config: Config, chunks: Optional[ChunkCache], reexports=None):
    """The file's model (with its chunks, for positions), or the FileProblem that stopped it.
    ``reexports``: how its project resolves names re-imported from a library (project/view.py)."""
    lifted = None
    try:
        chunked = parse_chunked(text, chunks)
        module = chunked.module if chunked is not None else parse_module(text)
    except cst.ParserSyntaxError as exc:
        lifted, chunked = _lifted_module(text), None
        if lifted is None:
            return _syntax_problem(text, filename, exc)
        module = lifted[1]
    except RecursionError:
        return FileProblem(filename, "skipped: too deeply nested to parse")
    except (cst.CSTValidationError, ValueError) as exc:
        # libcst's tokenizer accepts some characters its own node validation then refuses.
        return _syntax_problem(text, filename, exc)
    checkpoint()
    try:
        model = FileModel.build(module, filename, config.torch_version, reexports)
    except RecursionError:
        return FileProblem(filename, "skipped: too deeply nested to analyse")
    model.text, model.chunked = text, chunked
    if lifted is not None:
        model.lifted_text = lifted[0]
    return model


def _lifted_module(text: str) -> Optional[Tuple[str, cst.Module]]:
    """A Python 2 or 3.6-era file read in today's spelling (old_syntax.py), when that parses."""
    lifted = old_syntax.lift(text)
    if lifted is None:
        return None
    try:
        return lifted, parse_module(lifted)
    except (cst.ParserSyntaxError, cst.CSTValidationError, ValueError, RecursionError):
        return None


def _neighbour_builder(config: Config):
    """How a project view reads another file of the project (from disk, or the text an editor
    holds for it): decoded and screened like a checked file; anything odd leaves it out (None),
    never an error."""

    def build(real_path: str, text: Optional[str] = None, reexports=None):
        if text is None:
            try:
                data = read_regular(real_path, _NEIGHBOUR_LIMIT)[0]
            except (OSError, ValueError, FileTooLarge):
                return None  # a named pipe, a device, too large, gone
            try:
                text = decode_source(data).text
            except DecodeError:
                return None
        elif len(text) > _NEIGHBOUR_LIMIT:
            return None
        if nesting_problem(text) is not None:
            return None
        outcome = _parse(text, real_path, config, None, reexports)
        return outcome if isinstance(outcome, FileModel) else None

    return build


# A neighbour larger than this is left out of the project view (a generated table, a vendored file).
_NEIGHBOUR_LIMIT = 2 << 20


def _analyse(text: str, filename: str, rules: Sequence[Rule], config: Config, chunks: Optional[ChunkCache],
             view=None, path: Optional[Path] = None, keep: Optional[List[object]] = None, part: bool = False):
    """Parse, model, rules, positions: a list of findings, or the FileProblem that stopped it."""
    open_questions.new_check()
    model = view.known(str(path), text) if view is not None and not part else None
    if model is None:
        model = _parse(text, filename, config, chunks, view.reexports_for(str(path)) if view is not None else None)
        if isinstance(model, FileProblem):
            return model
        if view is not None:
            if part:
                view.attach(str(path), model)
            else:
                view.register(str(path), model)
    if keep is not None:
        keep.append(model)
    if model.other_framework:
        return []
    try:
        reports: List[Report] = []
        for rule in rules:
            checkpoint()
            reports.extend(rule.check(model))
        if not reports:
            return []
        if model.is_test_code or unimportable(model) or stops_at_start(model):
            # What a test costs is not what training costs: report, but below the default view.
            # So for a vendored copy of a library file whose relative imports its folder lacks
            # (nothing can import or run it), and for a stale script whose entry path calls a
            # project function with arguments it cannot take (it stops before it trains).
            reports = [replace(r, severity=Severity.INFO) for r in reports]
        elif model.facts.main_blocks:
            reports = _self_tests_lowered(model, reports)
        if not config.show_info:
            # `_visible` would drop them: their positions (printing their statements) are not needed.
            reports = [r for r in reports if r.severity is not Severity.INFO]
            if not reports:
                return []
        checkpoint()
        lifted = model.lifted_text
        positions = _Positions(model, lifted if lifted is not None else text, model.chunked)
        # A report on a node of another file (a rule that followed a value across modules to a
        # call it should have left to that file's check) has no place here: it is dropped, and
        # the file's other findings stand.
        reports = [r for r in reports if positions.holds(r.node)]
        if model.facts.dead_blocks or model.facts.version_gates:
            reports = _outside_dead_blocks(model, reports, positions)
        if model.project is not None and (model.facts.classes or model.facts.functions):
            reports = _unbuilt_classes_lowered(model, reports, positions, config.show_info)
        findings = [_finding(r, positions, filename, config.docs_url) for r in reports]
        if lifted is not None:
            # A fix would write the lifted spelling back into a file its author keeps as it is.
            for finding in findings:
                finding.fix = None
        return findings
    except RecursionError:
        return FileProblem(filename, "skipped: too deeply nested to analyse")


def _self_tests_lowered(model: FileModel, reports: List[Report]) -> List[Report]:
    """What the self-test of a library module runs (model/self_tests.py) is info, as in a test
    module."""
    if not any(r.severity is not Severity.INFO for r in reports):
        return reports
    inside = self_test_nodes(model)
    if not inside:
        return reports
    return [replace(r, severity=Severity.INFO) if id(r.node) in inside else r for r in reports]


def _unbuilt_classes_lowered(model: FileModel, reports: List[Report], positions: _Positions, show_info: bool) -> List[Report]:
    """What the methods of a class nothing in the project builds or names do, or a function
    nothing runs, costs no run of the project anything (model/unbuilt_classes.py): info."""
    if not any(r.severity is not Severity.INFO for r in reports):
        return reports

    def rows(statement: cst.CSTNode):
        return positions.start(statement).row, positions.end(statement).row

    spans = unbuilt_class_rows(model, rows)
    if not spans:
        return reports
    firsts = [first for first, _ in spans]
    out = []
    for report in reports:
        if report.severity is not Severity.INFO:
            row = positions.start(report.node).row
            at = bisect.bisect_right(firsts, row) - 1
            if at >= 0 and row <= spans[at][1]:
                if not show_info:
                    continue
                report = replace(report, severity=Severity.INFO)
        out.append(report)
    return out


def _outside_dead_blocks(model: FileModel, reports: List[Report], positions: _Positions) -> List[Report]:
    """Leave out what sits in code switched off by hand (`if 0:`, the `else` of `if True:`), after
    a jump out of its block, in a replaced definition or in a fallback for an old torch. The spans are merged and searched by bisection: a file of
    many such blocks and many reports costs (spans + reports) x log(spans)."""
    spans = []
    for block in model.dead_blocks():
        statements = block.body if type(block) is cst.IndentedBlock else block if type(block) is tuple else (block,)
        if statements:
            spans.append((positions.start(statements[0]).row, positions.end(statements[-1]).row))
    spans.sort()
    merged: List[List[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    starts = [start for start, _ in merged]

    def dead(row: int) -> bool:
        index = bisect.bisect_right(starts, row) - 1
        return index >= 0 and row <= merged[index][1]

    return [r for r in reports if not dead(positions.start(r.node).row)]


def _syntax_problem(text: str, filename: str, exc: Exception) -> FileProblem:
    """CPython's own message (\"'(' was never closed\") reads better than the parser's token list."""
    try:
        ast.parse(text, filename)
    except SyntaxError as error:
        return FileProblem(filename, f"syntax error: {error.msg}", error.lineno or 1, max(1, error.offset or 1))
    except (ValueError, RecursionError, MemoryError):
        pass
    if isinstance(exc, cst.ParserSyntaxError):
        first = str(exc.message).strip().splitlines()[0] if exc.message else "invalid syntax"
        return FileProblem(filename, f"cannot parse: {first}", exc.raw_line, exc.raw_column + 1)
    lines = str(exc).strip().splitlines()
    return FileProblem(filename, f"cannot parse: {lines[0] if lines else type(exc).__name__}")


def _visible(findings: List[Finding], text: str, config: Config) -> List[Finding]:
    seen: Dict[tuple, Finding] = {}
    lines = split_lines(text)
    for finding in sorted(findings, key=lambda f: f.sort_key):
        if finding.severity is Severity.INFO and not config.show_info:
            continue
        row = finding.start.row
        if 0 < row <= len(lines) and is_suppressed(lines[row - 1], finding.code):
            continue
        seen.setdefault((finding.code, finding.start, finding.end), finding)
    return list(seen.values())


def check_file(path: Path, config: Config = DEFAULT_CONFIG, display: Optional[str] = None) -> FileResult:
    filename = display if display is not None else str(path)
    try:
        data, _ = read_regular(str(path), config.max_file_size)
    except NotRegularFile as exc:
        return FileResult(filename, problem=FileProblem(filename, str(exc.strerror)))
    except FileTooLarge as exc:
        return FileResult(filename, problem=too_large(filename, exc.size, config.max_file_size))
    except OSError as exc:
        return FileResult(filename, problem=FileProblem(filename, f"cannot read: {exc.strerror or exc}"))
    try:
        source = decode_source(data)
    except DecodeError as exc:
        return FileResult(filename, problem=FileProblem(filename, f"cannot decode: {exc}"))
    result = check_source(source.text, filename, config, path=path)
    result.source = source
    return result
