"""Running the engine for the server: off the event loop, one file version at a time, cached.

The engine is CPU-bound Python. It runs on one worker thread so that the event loop keeps
reading messages (cancellations, hovers, newer changes) while a file is analysed; one worker,
because on a small machine two analyses at once only make both late. A job queued for a
version the client has since replaced is dropped before it starts, and one already running is
stopped (budget.Cancelled).

A file whose analysis ran past its budget (at most SERVER_BUDGET_SECONDS here, less if the
project's `analysis-budget` says so) is checked from then on by a second worker of its own, so
that no keystroke in another file waits behind it.

Each file is checked in its project (advisor/project). Each worker keeps its own project views
(they are never shared between threads), and before each analysis gives them the texts of the
open documents, which stand in for the files on disk: a neighbour is read as the editor holds
it, saved or not. A view forgets what it read from a text that changed.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set, Tuple

from lsprotocol import types

from advisor.budget import Cancelled
from advisor.config import Config
from advisor.chunked import ChunkCache
from advisor.suppression import check_text
from advisor.findings import FileProblem, Finding
from advisor.fixes import fix_until_stable
from advisor.limits import LimitProblem, text_too_large
from advisor.lsp import chunk_edits, convert
from advisor.lsp.comment_edits import reuse_findings
from advisor.project.view import Views

log = logging.getLogger("advisor.lsp")

KEEP_PARSED_FILES = 8
# Models of published analyses left for the collector to free at the next pause in typing; past
# this many, the next analysis frees them first, so that memory stays bounded while typing goes
# on without a pause. A cut's model holds a fraction of a MB (a 5,000-line file: 87 MB after its
# full analysis, 12 MB more after 40 keystrokes held), and freeing them all takes one collection.
MOST_RETIRED_MODELS = 100
# The most CPU time one analysis may take in the editor, whatever the project allows the CLI.
SERVER_BUDGET_SECONDS = 10.0


def _interactive(config: Config) -> Config:
    if config.analysis_budget <= SERVER_BUDGET_SECONDS:
        return config
    return config.replace(analysis_budget=SERVER_BUDGET_SECONDS)


class Superseded(Exception):
    """The version asked for is no longer the one the client has; nothing was computed."""


@dataclass
class Analysis:
    uri: str
    version: Optional[int]
    key: Tuple
    findings: List[Finding]
    problem: Optional[FileProblem]
    diagnostics: List[types.Diagnostic] = field(default_factory=list)
    # The project files its findings may depend on (absolute paths): an edit of one of them
    # re-checks it.
    dependencies: Tuple[str, ...] = ()
    # What it was computed from, for the next version: the text and what else the findings
    # depend on (a later version with the same basis may reuse them, comment_edits).
    text: Optional[str] = None
    basis: Tuple = ()
    boundaries: Tuple[int, ...] = ()  # the rows where its top-level statements start
    # The findings were moved from the previous version's, or computed for the part of the
    # file an edit reaches (chunk_edits), not for the whole text: a full analysis of the same
    # version follows in the background (Analyzer.verify).
    reused: bool = False
    # The full analysis such findings rest on (None for a full analysis).
    anchor: Optional["Analysis"] = None

    @property
    def result_id(self) -> str:
        return ":".join(str(part) for part in self.key)


@dataclass(frozen=True)
class Job:
    """Everything a worker needs, resolved on the event loop (configuration lookups touch the
    resolver's caches, which are not shared with the worker)."""

    uri: str
    text: str
    version: Optional[int]
    key: Tuple
    filename: str
    path: Optional[Path]
    config: Config
    excluded: bool
    encoding: str
    href: Callable[[str], Optional[str]]
    wanted: Callable[[], bool]
    related_information: bool = False  # the client takes diagnostics' related places
    # The open documents' texts by path, taken when the job was made: they stand in for the
    # files on disk in the project view.
    stand_ins: Callable[[], Dict[str, str]] = dict
    # A re-check because a dependency changed: it shares no run with a check the client asked
    # for, whose `wanted` is not tied to edits of other files.
    background: bool = False


class Analyzer:
    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="advisor-analysis")
        # Files whose last analysis hit a limit, and the worker they go to instead.
        self._slow: Set[str] = set()
        self._slow_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="advisor-slow")
        self._chunks_lock = threading.Lock()  # both workers take and put chunk caches
        self._cache: Dict[str, Analysis] = {}
        self._last_good: Dict[str, Analysis] = {}
        self._running: Dict[Tuple[str, Tuple], asyncio.Future] = {}
        # Parsed top-level statements of the last analysis of the files being edited: an edit
        # re-parses only the statements it touched. A parsed file holds tens of MB, so only
        # the most recently analysed few keep theirs. Filled by the worker thread; the event
        # loop only drops entries (one dict operation each).
        self._chunks: "OrderedDict[str, ChunkCache]" = OrderedDict()
        # Project views, one set per worker thread; files changed on disk (path, created or
        # deleted), appended on the event loop and applied by each worker before its next job.
        self._views: Dict[int, Views] = {id(self._executor): Views(), id(self._slow_executor): Views()}
        self._disk_changes: List[Tuple[str, bool]] = []
        self._applied: Dict[int, int] = {}
        # The models of finished analyses, freed after their diagnostics are out (release).
        self._retired: List[object] = []
        self._collector_held = False
        # The parsed statements of the last verification (verify), for the next one.
        self._verify_chunks: Dict[str, ChunkCache] = {}
        # Per file, the last cut tried on a full analysis (chunk_edits): (that analysis, the
        # pieces kept, the pieces recomputed, whether the cut gave the full findings there).
        self._cuts_tried: Dict[str, Tuple[Analysis, Tuple[int, ...], frozenset, bool]] = {}
        self._anchor_pieces: Dict[str, Tuple[Analysis, chunk_edits.Placed]] = {}
        # Per file, the last answer a cut gave, with its findings placed on its pieces: the
        # base of the next cut when the edits since the full analysis are too spread out.
        self._chained: Dict[str, Tuple[Analysis, chunk_edits.Placed]] = {}

    def latest(self, uri: str) -> Optional[Analysis]:
        return self._cache.get(uri)

    def forget(self, uri: str) -> None:
        self._cache.pop(uri, None)
        self._last_good.pop(uri, None)
        self._slow.discard(uri)
        self._cuts_tried.pop(uri, None)
        self._anchor_pieces.pop(uri, None)
        self._chained.pop(uri, None)
        with self._chunks_lock:
            self._chunks.pop(uri, None)
            self._verify_chunks.pop(uri, None)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._slow_executor.shutdown(wait=False, cancel_futures=True)

    def executor_for(self, uri: str) -> ThreadPoolExecutor:
        return self._slow_executor if uri in self._slow else self._executor

    def disk_changed(self, path: str, created_or_deleted: bool) -> None:
        """A project file changed on disk (the editor's file watcher): the views read it again."""
        self._disk_changes.append((path, created_or_deleted))

    def forget_views(self) -> None:
        """The configuration changed (a pyproject.toml: how neighbours are read, where a project
        starts): every worker's views start over."""
        self._disk_changes.append(("", True))

    def views(self, executor: ThreadPoolExecutor, stand_ins: Dict[str, str]) -> Views:
        """The project views of ``executor``'s worker, brought up to date: files changed on
        disk, and the texts of the open documents. Call on that worker only."""
        views = self._views[id(executor)]
        done = self._applied.get(id(executor), 0)
        pending = self._disk_changes[done:]
        self._applied[id(executor)] = done + len(pending)
        for path, structural in pending:
            if path:
                views.changed(path, structural)
            else:
                views.forget()
        views.set_texts(stand_ins)
        return views

    async def analyse(self, job: Job) -> Analysis:
        cached = self._cache.get(job.uri)
        if cached is not None and cached.key == job.key:
            return cached
        running_key = (job.uri, job.key, job.background)
        future = self._running.get(running_key)
        if future is None:
            loop = asyncio.get_running_loop()
            executor = self.executor_for(job.uri)
            future = loop.run_in_executor(executor, self._run, job, self._last_good.get(job.uri), executor,
                                          self._cache.get(job.uri), False, True)
            self._running[running_key] = future
            future.add_done_callback(lambda _f: self._running.pop(running_key, None))
        # Shielded: a cancelled request ($/cancelRequest, a newer keystroke) stops waiting,
        # while another waiter for the same version still gets the result.
        analysis = await asyncio.shield(future)
        current = self._cache.get(job.uri)
        if current is None or _newer(analysis, current):
            self._cache[job.uri] = analysis
            if analysis.problem is None:
                self._last_good[job.uri] = analysis
            if isinstance(analysis.problem, LimitProblem):
                self._slow.add(job.uri)
            else:
                self._slow.discard(job.uri)
        return analysis

    def _stand_ins(self, job: Job) -> Dict[str, str]:
        texts = job.stand_ins()
        if job.path is not None:
            texts[str(job.path)] = job.text  # the version being checked, whatever came since
        return texts

    def _run(self, job: Job, last_good: Optional[Analysis], executor: Optional[ThreadPoolExecutor] = None,
             previous: Optional[Analysis] = None, verifying: bool = False, hold: bool = False) -> Analysis:
        """One analysis of ``job`` on the calling worker: the previous findings moved when
        ``previous`` (the version before) allows it, else a check of the text. ``verifying``:
        a background check (its own chunk cache). ``hold``: the collector stays off after it
        until ``release`` (the caller publishes first, then releases)."""
        if not job.wanted():
            raise Superseded()
        lines = convert.lines_of(job.text)
        if job.excluded:
            return Analysis(job.uri, job.version, job.key, [], None)
        reused = self._reused(job, previous)
        if reused is not None:
            reused.diagnostics = self._diagnostics(job, reused.findings, lines)
            return reused
        if not hold or len(self._retired) >= MOST_RETIRED_MODELS:
            # What the analyses before left. While keystrokes come without a pause it waits (the
            # collection that frees a full analysis's model takes tens of ms on a large file, and
            # would delay the next keystroke's diagnostics by as much): the pause frees it.
            self.release()
        if hold:
            gc.disable()  # until release(), after its diagnostics are published
            self._collector_held = True
        views = self.views(executor or self.executor_for(job.uri), self._stand_ins(job))
        models: List[object] = []  # the one this analysis builds
        with self._chunks_lock:
            if verifying:
                # Its own cache, seeded from the file's: a verification is often cancelled
                # midway, and that must not cost the next keystroke the parse of the whole file.
                chunks = ChunkCache.seeded(self._chunks.get(job.uri), self._verify_chunks.get(job.uri))
                self._verify_chunks = {job.uri: chunks}
            else:
                chunks = self._chunks.pop(job.uri, None) or ChunkCache()
                self._chunks[job.uri] = chunks
                while len(self._chunks) > KEEP_PARSED_FILES:
                    self._chunks.popitem(last=False)
        try:
            if previous is not None and not verifying:
                cut = self._cut(job, previous, views, chunks, models)
                if cut is not None:
                    if hold:
                        self._retired.extend(models)
                    # `forget` (the file closed) may have dropped the chain meanwhile: ranges afresh.
                    chained = self._chained.get(job.uri)
                    cut.diagnostics = self._diagnostics(job, cut.findings, lines,
                                                        chained[1] if chained is not None and chained[0] is cut else None)
                    return cut
                models.clear()
            result = check_text(job.text, job.filename, _interactive(job.config), path=job.path, chunks=chunks,
                                cancelled=lambda: not job.wanted(), views=views, keep=models)
        except Cancelled:
            self._drop_chunks(job.uri, chunks)  # stopped midway: its statements may be half updated
            raise Superseded() from None
        if isinstance(result.problem, LimitProblem):
            self._drop_chunks(job.uri, chunks)
        analysis = Analysis(job.uri, job.version, job.key, result.findings, result.problem,
                            dependencies=tuple(result.dependencies or ()), text=job.text, basis=_basis(job),
                            boundaries=_boundaries(models, job.text))
        if hold:
            self._retired.extend(models)
        del models
        if result.problem is None:
            analysis.diagnostics = self._diagnostics(job, result.findings, lines)
            return analysis
        # The text does not parse (mid-edit, usually): keep the last good diagnostics so that
        # they do not flicker away while typing, without their fixes (their edits belong to
        # the old text), and add one diagnostic that says why the file was not re-checked.
        kept: List[types.Diagnostic] = []
        if last_good is not None:
            analysis.findings = list(last_good.findings)  # hover still explains them
            for finding in last_good.findings:
                diag = convert.diagnostic(finding, lines, job.encoding, job.version, job.href(finding.code))
                diag.data = {"version": job.version, "name": finding.name, "stale": True}
                kept.append(diag)
        analysis.diagnostics = kept + [convert.problem_diagnostic(result.problem, lines, job.encoding)]
        return analysis

    def _diagnostics(self, job: Job, findings: List[Finding], lines,
                     placed: Optional[chunk_edits.Placed] = None) -> List[types.Diagnostic]:
        """``placed``: the full analysis the findings were carried from, whose ranges it keeps."""
        locate = (lambda _related: (job.uri, lines)) if job.related_information else None
        if placed is None:
            return [convert.diagnostic(f, lines, job.encoding, job.version, job.href(f.code), locate) for f in findings]
        return [convert.diagnostic(f, lines, job.encoding, job.version, job.href(f.code), locate,
                                   placed.range_of(f, lines, job.encoding)) for f in findings]

    def _reused(self, job: Job, previous: Optional[Analysis]) -> Optional[Analysis]:
        """The previous version's findings moved to this version's lines, when the edit only
        touched comment and blank lines (comment_edits); None when it must be analysed."""
        if (previous is None or previous.problem is not None or previous.text is None
                or previous.key[1:] != job.key[1:] or previous.basis != _basis(job)
                or text_too_large(job.text, job.config.max_file_size)):
            return None
        reused = reuse_findings(previous.text, job.text, previous.findings, _required_strings(), previous.boundaries)
        if reused is None:
            return None
        return Analysis(job.uri, job.version, job.key, reused.findings, None, dependencies=previous.dependencies,
                        text=job.text, basis=previous.basis, boundaries=reused.boundaries, reused=True,
                        anchor=previous.anchor or previous)

    def _cut(self, job: Job, previous: Analysis, views: Views, chunks: ChunkCache,
             models: List[object]) -> Optional[Analysis]:
        """The findings of this version when the edit since the last full analysis stays inside
        top-level functions and classes (chunk_edits): the part of the file it reaches analysed
        alone, the rest moved. None when the edit does not qualify, or when the same cut of the
        last full analysis did not give its findings. Raises budget.Cancelled."""
        anchor = previous.anchor or previous
        if (anchor.problem is not None or anchor.text is None or anchor.key[1:] != job.key[1:]
                or anchor.basis != _basis(job) or text_too_large(job.text, job.config.max_file_size)):
            return None
        known = self._anchor_pieces.get(job.uri)
        if known is None or known[0] is not anchor:
            placed = chunk_edits.Placed(anchor.findings, chunk_edits.pieces_of(anchor.text))
            known = self._anchor_pieces[job.uri] = (anchor, placed)
        placed = known[1]
        base = placed  # the analysis whose findings are carried: the full one ...
        if "\r" in job.text:
            return None  # rows are counted by "\n" alone
        # Split once for both plans below, from the version before where its pieces are known.
        chained = self._chained.get(job.uri)
        if chained is not None and chained[0] is previous and previous.text is not None:
            new_pieces = chunk_edits.pieces_after(previous.text, chained[1].pieces, job.text)
        elif previous is anchor:
            new_pieces = chunk_edits.pieces_after(anchor.text, placed.pieces, job.text)
        else:
            new_pieces = chunk_edits.pieces_of(job.text)
        plan = chunk_edits.plan(anchor.text, job.text, placed.pieces, new_pieces)
        if plan is None:
            # ... or, when the edits since it spread over more definitions than a cut allows,
            # the cut that answered the version before (a chain of cuts, each tried on the full
            # analysis; what drifts is corrected by the check after a pause, verify).
            if (chained is None or chained[0] is not previous) and previous.anchor is anchor and previous.reused:
                # The version before moved the findings after a comment edit: it can be the base
                # as well as a cut's answer (comment edits spread over many functions, then one
                # the shortcut declines, would otherwise cost a full analysis).
                chained = (previous, chunk_edits.Placed(previous.findings, chunk_edits.pieces_of(previous.text)))
            if chained is None or chained[0] is not previous or previous.anchor is not anchor:
                return None
            plan = chunk_edits.plan(previous.text, job.text, chained[1].pieces, new_pieces)
            if plan is None or [p.name for p in plan.new] != [p.name for p in placed.pieces]:
                return None
            base = chained[1]
        config = _interactive(job.config)

        def part(pieces) -> Optional[List[Finding]]:
            text, to_file = chunk_edits.smaller_module(pieces, plan.kept)
            result = check_text(text, job.filename, config, path=job.path, chunks=ChunkCache.seeded(chunks),
                                cancelled=lambda: not job.wanted(), views=views, keep=models, part=True)
            if result.problem is not None:
                return None
            found = chunk_edits.findings_on(chunk_edits.mapped(result.findings, to_file), pieces, plan.recomputed)
            return sorted(found, key=lambda f: f.sort_key)

        tried = self._cuts_tried.get(job.uri)
        if tried is not None and tried[0] is anchor and tried[1:3] == (plan.kept, plan.recomputed):
            faithful = tried[3]
        else:
            # The same cut of the full analysis must give its findings there.
            expected = sorted(chunk_edits.findings_on(anchor.findings, placed.pieces, plan.recomputed),
                              key=lambda f: f.sort_key)
            faithful = part(placed.pieces) == expected
            self._cuts_tried[job.uri] = (anchor, plan.kept, plan.recomputed, faithful)
        if not faithful:
            return None
        entries = chunk_edits.carried_entries(base, plan)
        computed = part(plan.new) if entries is not None else None
        if computed is None or entries is None:
            return None
        findings = sorted([entry[0] for entry in entries] + computed, key=lambda f: f.sort_key)
        served = Analysis(job.uri, job.version, job.key, findings, None, dependencies=anchor.dependencies,
                          text=job.text, basis=anchor.basis, boundaries=tuple(p.first_row for p in plan.new),
                          reused=True, anchor=anchor)
        # The next cut's base: the carried findings keep their pieces, and the ranges worked out
        # for the version before, shifted by the rows they moved (their text did not change).
        chained = chunk_edits.Placed(findings, plan.new, ranges_from=placed,
                                     known={id(entry[0]): (entry[1], entry[2]) for entry in entries})
        chained.take_ranges(base, [(entry[0], entry[3], entry[4]) for entry in entries if entry[4] is not None],
                            job.encoding)
        self._chained[job.uri] = (served, chained)
        return served

    def release(self) -> None:
        """Frees what the analyses done so far left. An analysis allocates its model with the
        cyclic collector off (engine.check_source), and the model holds cycles: the first
        collection after it traverses all of it (tens of ms on a large file). The collector
        stays off, and the model alive, until this runs after the diagnostics are published
        (``verify``), or at the start of the worker's next analysis. Call on a worker."""
        self._retired.clear()
        if self._collector_held:
            self._collector_held = False
            gc.enable()
            gc.collect(1)

    async def verify(self, job: Job, published: Analysis) -> Optional[Analysis]:
        """After ``published`` went out: frees the previous model on the worker, and when the
        findings were reused rather than computed, analyses the same version in full; returns
        that analysis when its diagnostics differ (it then replaces the cached one), else None.
        Runs on the file's worker, so a newer edit waits at most until this one notices it is
        superseded (budget.Cancelled)."""
        loop = asyncio.get_running_loop()
        executor = self.executor_for(job.uri)
        if not published.reused:
            if self._collector_held or self._retired:
                try:
                    await loop.run_in_executor(executor, self.release)
                except RuntimeError:  # shutting down: the worker takes no more jobs
                    pass
            return None
        running_key = (job.uri, job.key, "verify")
        future = self._running.get(running_key)
        if future is None:
            future = loop.run_in_executor(executor, self._run, job, self._last_good.get(job.uri), executor, None, True)
            self._running[running_key] = future
            future.add_done_callback(lambda _f: self._running.pop(running_key, None))
        full = await asyncio.shield(future)
        if _same(full, published):
            # Nothing to republish; the full analysis becomes the base of the next edits' cuts.
            if self._cache.get(job.uri) is published:
                full.diagnostics = published.diagnostics
                self._cache[job.uri] = full
                if full.problem is None:
                    self._last_good[job.uri] = full
            return None
        log.warning("%s: the findings carried over after an edit (of comments, or inside functions analysed"
                    " alone) differ from a full analysis of version %s; republishing", job.uri, job.version)
        current = self._cache.get(job.uri)
        if current is None or current is published or _newer(full, current):
            self._cache[job.uri] = full
            if full.problem is None:
                self._last_good[job.uri] = full
        return full

    def _drop_chunks(self, uri: str, chunks: ChunkCache) -> None:
        with self._chunks_lock:
            if self._chunks.get(uri) is chunks:
                del self._chunks[uri]
            if self._verify_chunks.get(uri) is chunks:
                self._verify_chunks = {}

    async def fix_all(self, job: Job) -> Optional[Tuple[str, int]]:
        """The text with every safe fix applied (re-checked until stable, as `advisor check
        --fix` does), and how many fixes that took; None when nothing applies."""

        executor = self.executor_for(job.uri)

        def work() -> Optional[Tuple[str, int]]:
            if not job.wanted():
                raise Superseded()
            if job.excluded:
                return None

            config = _interactive(job.config)
            views = self.views(executor, self._stand_ins(job))

            def check(text: str):
                return check_text(text, job.filename, config, path=job.path, views=views)

            try:
                new_text, applied, final = fix_until_stable(job.text, check, unsafe=False)
            finally:
                if job.path is not None:
                    views.changed(str(job.path))  # the fixed texts were registered, not the buffer
            if isinstance(final.problem, LimitProblem):
                return None  # a round ran out of time: offer nothing rather than half the fixes
            return (new_text, applied) if applied else None

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(executor, work)


def _boundaries(models: List[object], text: str) -> Tuple[int, ...]:
    """The first rows of the chunks of the model built from ``text``, if one was."""
    model = models[-1] if models else None
    chunked = getattr(model, "chunked", None)
    if chunked is None or getattr(model, "text", None) is not text:
        return ()
    return tuple(chunked.first_lines)


def _basis(job: Job) -> Tuple:
    return (job.filename, job.path, job.config, job.encoding, job.related_information)


def _same(one: Analysis, other: Analysis) -> bool:
    return one.problem == other.problem and one.findings == other.findings


_REQUIRED: List[str] = []


def _required_strings() -> List[str]:
    """Every string a rule's pre-filter looks for in the text (engine._applies)."""
    if not _REQUIRED:
        from advisor.rules import ALL_RULES

        _REQUIRED.extend(sorted({s for rule in ALL_RULES for group in rule.requires for s in group}))
    return _REQUIRED


def _newer(analysis: Analysis, current: Analysis) -> bool:
    """Results can finish out of order across configuration changes and re-checks; keep the
    newest (keys are the version, then generations that only grow)."""
    if analysis.version is None or current.version is None:
        return True
    return (analysis.version, *analysis.key[1:]) >= (current.version, *current.key[1:])
