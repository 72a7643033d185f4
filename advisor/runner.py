"""Checking many files: the result cache first, then the rest in-process or on a process pool.

The parent asks the stat index first: a file unchanged since a clean result was recorded for it
is answered without being opened. Otherwise it reads and hashes the file and asks the result
cache; only misses are analysed. Misses go
to a pool of worker processes in chunks (largest files first, so that one huge file does not
finish last behind a queue of small ones), or stay in-process for one job or a handful of
files. Workers return whole FileResults, fixed text included; writing files stays with the
caller. Results come back in the order the jobs were given.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

from advisor.cache import ResultCache, config_fingerprint, content_digest, entry_key, open_result_cache
from advisor.collector import LARGE_FILE_BYTES, collector_paused, release_free_memory
from advisor.config import Config
from advisor.findings import Applicability, FileProblem, FileResult
from advisor.limits import FileTooLarge, LimitProblem, NotRegularFile, over_budget, read_regular, too_large
from advisor.source import DecodeError, decode_source
from advisor.stat_index import StatIndex, open_stat_index
from advisor.values import Value

# Below this many files to analyse, a pool costs more than it saves.
MIN_FILES_FOR_POOL = 8
# Below this many files to analyse, no progress bar.
MIN_FILES_FOR_PROGRESS = 20
MAX_FILES_PER_CHUNK = 32

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Callable, Iterator, List, Optional, Sequence, Tuple

    # (path, first result, config, unsafe) -> the result after fixing, with fixed_text set
    Fixer = Callable[[Path, FileResult, Config, bool], FileResult]
    # A file's result, or the message of the internal error that stopped its analysis.
    Outcome = Tuple[Optional[FileResult], Optional[str]]
    # What an analysis tells the stat index: whether the bytes it read were clean, the stat of
    # the file they came from and their content digest (the result cache holds the result under
    # it); None when it cached nothing (unreadable, crashed, rewritten or not stored).
    Recorded = Optional[Tuple[bool, os.stat_result, str]]


class Job(Value):
    """One file to check. Immutable."""

    __slots__ = ("display", "config", "stat")
    _fields = __slots__
    __hash__ = Value.value_hash

    def __init__(self, display: str, config: Config, stat: Optional[os.stat_result] = None) -> None:
        self.display = display  # the path as given or found, also the name the findings carry
        self.config = config
        self.stat = stat  # the discovery stat, compared with the stat index; None: not asked

    @property
    def path(self) -> Path:
        # Built when needed: a warm run over thousands of files needs none of them.
        return Path(self.display)


class Options(Value):
    """How a run checks its files. Immutable."""

    __slots__ = ("jobs", "use_cache", "fix", "unsafe", "progress", "cache_root")
    _fields = __slots__
    __hash__ = Value.value_hash

    def __init__(self, jobs: int = 1, use_cache: bool = True, fix: bool = False, unsafe: bool = False,
                 progress: bool = False, cache_root: Optional[Path] = None) -> None:
        self.jobs = jobs
        self.use_cache = use_cache
        self.fix = fix  # compute fixes (--fix or --diff)
        self.unsafe = unsafe
        self.progress = progress
        self.cache_root = cache_root  # None: cache_dir()


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_files(jobs: Sequence[Job], options: Options, fixer: Optional[Fixer] = None) -> List[Outcome]:
    _DIGESTS.clear()  # a new run: files may have changed since the last one in this process
    cache = open_result_cache(options.cache_root) if options.use_cache else None
    index = _open_index(cache) if cache is not None else None
    fingerprints = _ConfigFingerprints()
    outcomes: List[Optional[Outcome]] = [None] * len(jobs)
    misses: List[int] = []
    sizes: List[int] = [0] * len(jobs)
    with collector_paused():  # thousands of small results, nothing to free
        for number, job in enumerate(jobs):
            hit = _from_cache(cache, index, fingerprints, job, options) if cache is not None else None
            if isinstance(hit, FileResult):
                outcomes[number] = (hit, None)
            else:
                misses.append(number)
                # Orders the pool's work, largest first (see _chunks). Without the cache nothing
                # was read and all sizes are 0: files go in their given order, 32 to a chunk.
                # (Taking sizes from the stat instead was measured: 10% slower on all of torch.)
                sizes[number] = hit if isinstance(hit, int) else 0
    if misses:
        todo = [jobs[i] for i in misses]
        todo_sizes = [sizes[i] for i in misses]
        use_cache = cache is not None
        if options.jobs > 1 and len(todo) >= MIN_FILES_FOR_POOL:
            done = _in_pool(todo, todo_sizes, options, fixer, use_cache)
        else:
            done = _in_process(todo, options, fixer, use_cache)
        for number, (outcome, recorded) in zip(misses, done):
            outcomes[number] = outcome
            job = jobs[number]
            if index is not None and recorded is not None:
                clean, read_stat, content = recorded
                index.record(job.display, read_stat, fingerprints.indexed(job), clean, content)
        if cache is not None:
            cache.prune()
    if index is not None:
        index.save()
    return [o if o is not None else (None, "not checked") for o in outcomes]


def _open_index(cache: ResultCache) -> Optional[StatIndex]:
    from advisor.cache import tool_fingerprint

    if os.name == "nt":
        # Windows reports the creation time as st_ctime: no field there moves on every write,
        # so a matching signature would not prove an unchanged file.
        return None
    # ADVISOR_STAT_INDEX=off: for writes that move no file time (a shared mmap), every file is
    # read and hashed; what is read is still recorded, so such a run also refreshes the index.
    trust = os.environ.get("ADVISOR_STAT_INDEX", "").strip().lower() not in ("off", "0", "false", "no")
    try:
        return open_stat_index(cache.cache_folder, tool_fingerprint(), trust=trust)
    except OSError:
        return None


class _ConfigFingerprints:
    """config_fingerprint, computed once per configuration (unless it depends on the path)."""

    def __init__(self) -> None:
        self._known: dict = {}
        self._roots: dict = {}

    def __call__(self, job: Job) -> str:
        config = job.config
        if config.per_file_ignores:
            return config_fingerprint(config, job.path)
        known = self._known.get(id(config))
        if known is None or known[0] is not config:
            known = self._known[id(config)] = (config, config_fingerprint(config, job.path))
        return known[1]

    def indexed(self, job: Job) -> str:
        """What the stat index keys a clean result by: the configuration, and the list of files
        of the file's project (a module added beside it may give it findings; see
        project/layout.py's listing_digest). The index answers from the file's stat alone."""
        config = self(job)
        folder = os.path.dirname(os.path.abspath(job.display))
        key = (folder, job.config.project_roots)
        root = self._roots.get(key)
        if root is None:
            from advisor.project.layout import LISTING, project_root

            root = self._roots[key] = LISTING + project_root(job.display, job.config.project_roots)
        return config + ":" + (_DIGESTS.digest(root) or "")


def _only_listing(deps: dict) -> bool:
    """Dependencies that are no files (the project's list of files, which the stat index keys)."""
    return all(path.startswith("\0") for path in deps)


def _from_cache(cache: ResultCache, index: Optional[StatIndex], fingerprints: _ConfigFingerprints, job: Job,
                options: Options):
    """A FileResult on a hit; on a miss, the file's size in bytes (0 if unreadable)."""
    config = fingerprints(job)
    indexed = fingerprints.indexed(job) if index is not None else config
    if index is not None and job.stat is not None and index.is_clean(job.display, job.stat, indexed):
        return FileResult(job.display)  # unchanged since it was found clean: not even opened
    try:
        data, read_stat = _read(job)
    except (OSError, FileTooLarge):
        return 0  # the analysis reports it
    content = content_digest(data)
    depends: List[bool] = []

    def deps_valid(deps: dict) -> bool:
        if not _only_listing(deps):
            depends.append(True)
        return _DIGESTS.unchanged(deps)

    entry = cache.get(entry_key(content, job.display, config), deps_valid)
    if entry is None:
        return len(data)
    findings, problem, warnings = entry
    if index is not None and not depends:
        # A result that other project files may change is never answered from the stat index
        # (as when it is stored): the file's own stat says nothing about them.
        index.record(job.display, read_stat, indexed, not findings and problem is None and not warnings, content)
    if options.fix and any(
        f.fix is not None and (options.unsafe or f.fix.applicability is Applicability.SAFE) for f in findings
    ):
        return len(data)  # it will be rewritten: analyse it afresh
    source = None
    if findings or problem is not None:
        try:
            source = decode_source(data)
        except DecodeError:
            source = None
    return FileResult(job.display, findings, problem, source, warnings=warnings)


class _Digests:
    """The content digests of project files a result depends on, each file hashed once per
    process (per run: the files do not change under a run)."""

    def __init__(self) -> None:
        self._known: dict = {}

    def digest(self, path: str) -> Optional[str]:
        if path not in self._known and path.startswith("\0"):
            # No file: what stands for the project's list of files (project/layout.py). Imported
            # here: a warm run whose results depend on no project starts without it.
            from advisor.project.layout import pseudo_digest

            self._known[path] = pseudo_digest(path)
        if path not in self._known:
            try:
                with open(path, "rb") as handle:
                    self._known[path] = content_digest(handle.read())
            except OSError:
                self._known[path] = None
        return self._known[path]

    def of(self, paths) -> Optional[dict]:
        """{path: digest} for a result's dependencies; None when one cannot be read (the
        result is then not stored: nothing could tell when it goes stale)."""
        out = {}
        for path in paths:
            digest = self.digest(path)
            if digest is None:
                return None
            out[path] = digest
        return out

    def unchanged(self, deps: dict) -> bool:
        return all(self.digest(path) == digest for path, digest in deps.items())

    def clear(self) -> None:
        self._known.clear()

    def forget(self, path: str) -> None:
        self._known.pop(path, None)
        self._known.pop(os.path.normpath(os.path.abspath(path)), None)


_DIGESTS = _Digests()


def forget_digest(path: str) -> None:
    """``path`` was rewritten by this process: its digest is read again when next needed."""
    _DIGESTS.forget(path)


def _read(job: Job) -> Tuple[bytes, os.stat_result]:
    """The file's bytes, and the stat of the file they came from, taken on the open file before
    reading: what the stat index records. The discovery stat will not do: the name may lead to
    another file by now (a link re-pointed in between), and the index's margin is measured from
    the index's creation, which this stat follows."""
    return read_regular(job.display, job.config.max_file_size)


# -- analysis of one file (in the parent or a worker) ------------------------------------------
def _check_bytes(data: bytes, job: Job, unless_risky: bool = False) -> Optional[FileResult]:
    """engine.check_file (through suppression.check_text) on bytes already read; None, with
    ``unless_risky``, for a text that could crash or stall the parser (guards.looks_risky), which
    the caller checks elsewhere."""
    from advisor.suppression import check_text  # on the first miss: an all-cached run never imports it

    filename = job.display
    try:
        source = decode_source(data)
    except DecodeError as exc:
        return FileResult(filename, problem=FileProblem(filename, f"cannot decode: {exc}"))
    if unless_risky:
        from advisor.guards import looks_risky

        if looks_risky(source.text):
            return None
    result = check_text(source.text, filename, job.config, path=job.path)
    result.source = source
    return result


# What _analyse returns, when asked to, for a file to be checked in a process of its own.
_RISKY = "risky"


def _analyse(job: Job, options: Options, fixer: Optional[Fixer], use_cache: bool,
             unless_risky: bool = False) -> Tuple[Outcome, Recorded]:
    name = job.display
    try:
        try:
            data, read_stat = _read(job)
        except NotRegularFile as exc:
            return (FileResult(name, problem=FileProblem(name, str(exc.strerror))), None), None
        except FileTooLarge as exc:
            return (FileResult(name, problem=too_large(name, exc.size, job.config.max_file_size)), None), None
        except OSError as exc:
            return (FileResult(name, problem=FileProblem(name, f"cannot read: {exc.strerror or exc}")), None), None
        large = len(data) >= LARGE_FILE_BYTES
        if large:
            release_free_memory()  # what earlier files left: the large tree grows from a lean heap
        with collector_paused(keep=True):  # the project view keeps the file's model for the run
            result = _check_bytes(data, job, unless_risky)
        if result is None:
            return _RISKY  # type: ignore[return-value]
        first_findings, first_problem, first_warnings = result.findings, result.problem, result.warnings
        if options.fix and fixer is not None and result.source is not None and result.problem is None:
            result = fixer(job.path, result, job.config, options.unsafe)
        recorded: Recorded = None
        # A file about to be rewritten is not cached, nor one the limits stopped: that says
        # nothing about its content.
        stopped = isinstance(first_problem, LimitProblem) or isinstance(result.problem, LimitProblem)
        # Nor, under --fix, a result that depends on other files: another worker may rewrite one
        # of them while this one reads it, and the digest taken for the entry would then vouch
        # for a text this analysis never saw.
        racing = options.fix and bool(result.dependencies)
        cache = open_result_cache(options.cache_root) \
            if use_cache and result.fixed_text is None and not stopped and not racing else None
        if cache is not None:
            content = content_digest(data)
            deps = _DIGESTS.of(result.dependencies)
            if deps is not None and cache.put(
                entry_key(content, job.display, config_fingerprint(job.config, job.path)),
                first_findings, first_problem, deps, first_warnings,
            ) and _only_listing(deps):
                # A result that other project files may change is never answered from the
                # stat index: the file's own stat says nothing about them.
                recorded = (not first_findings and first_problem is None and not first_warnings, read_stat, content)
        if not result.findings and result.problem is None and result.fixed_text is None and not result.warnings:
            result.source = None  # nothing will show it: do not carry the text around
        if large:
            release_free_memory()
        return (result, None), recorded
    except Exception as exc:  # noqa: BLE001 - one file's crash must not end the run
        return (None, f"{type(exc).__name__}: {exc}"), None


def _in_process(todo: List[Job], options: Options, fixer: Optional[Fixer],
                use_cache: bool) -> List[Tuple[Outcome, Recorded]]:
    """Each file in this process, except those that could crash or stall the parser: each of
    those in a child process, so that it costs itself and nothing more."""
    with _Progress(options.progress and len(todo) >= MIN_FILES_FOR_PROGRESS, len(todo)) as progress:
        outcomes = []
        for job in todo:
            outcome = _analyse(job, options, fixer, use_cache, unless_risky=True)
            if outcome is _RISKY:
                with progress.paused():
                    outcome = _isolated([job], [[0]], 1, options, fixer, use_cache, lambda count: None)[0]
            outcomes.append(outcome)
            progress.advance(1)
        return outcomes


def _chunks(todo: List[Job], sizes: List[int], workers: int) -> List[List[int]]:
    """Indices into todo, grouped: largest files first, each chunk about total/(8*workers) bytes."""
    order = sorted(range(len(todo)), key=lambda i: (-sizes[i], i))
    budget = max(1, sum(sizes) // (workers * 8))
    chunks: List[List[int]] = []
    current: List[int] = []
    weight = 0
    for i in order:
        current.append(i)
        weight += sizes[i]
        if weight >= budget or len(current) >= MAX_FILES_PER_CHUNK:
            chunks.append(current)
            current, weight = [], 0
    if current:
        chunks.append(current)
    return chunks


def _context():
    import multiprocessing

    # fork starts workers in milliseconds with everything already imported; elsewhere
    # (macOS, Windows) the platform's default is the safe one.
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _in_pool(todo: List[Job], sizes: List[int], options: Options, fixer: Optional[Fixer],
             use_cache: bool) -> List[Tuple[Outcome, Recorded]]:
    import advisor.engine  # noqa: F401 - imported once here, inherited by forked workers

    if use_cache:
        from advisor.cache import tool_fingerprint

        tool_fingerprint()  # once, inherited by forked workers
    chunks = _chunks(todo, sizes, options.jobs)
    workers = min(options.jobs, len(chunks))
    with _Progress(options.progress and len(todo) >= MIN_FILES_FOR_PROGRESS, len(todo)) as progress:
        return _isolated(todo, chunks, workers, options, fixer, use_cache, progress.advance, progress.paused)


# CPU seconds a worker may use on one file beyond the analysis budget before the system ends
# it: the budget stops Python code on time, this only catches a native call that runs on.
CPU_GRACE_SECONDS = 10
# --fix checks a file again after each round of fixes (fixes.fix_until_stable: 10 at most).
FIX_CHECKS = 11


class _CpuAllowance:
    """The CPU seconds a worker may spend on one job (a class: it goes to spawned workers)."""

    def __init__(self, fix: bool) -> None:
        self.checks = FIX_CHECKS if fix else 1

    def __call__(self, job: Job) -> float:
        return job.config.analysis_budget * self.checks + CPU_GRACE_SECONDS


def _isolated(todo: List[Job], chunks: List[List[int]], workers: int, options: Options, fixer: Optional[Fixer],
              use_cache: bool, advance: Callable[[int], None],
              paused: Optional[Callable] = None) -> List[Tuple[Outcome, Recorded]]:
    """The jobs on worker processes (workers.py): one that dies costs the file it was on."""
    import signal

    from advisor.workers import failure, map_isolated

    allowance = _CpuAllowance(options.fix)
    over_cpu = -getattr(signal, "SIGXCPU", 0)

    def died(job: Job, why) -> Tuple[Outcome, Recorded]:
        if over_cpu and why.exitcode == over_cpu:
            name = job.display
            return (FileResult(name, problem=over_budget(name, job.config.analysis_budget)), None), None
        return (None, why.describe()), None

    def wall_limit(job: Job) -> float:
        # Only for a worker that hangs without using CPU: far beyond what a busy machine explains.
        return 10 * allowance(job) + 60

    results = map_isolated(_analyse, (options, fixer, use_cache), todo, chunks, workers, _context(), died,
                           advance, cpu_seconds=allowance, wall_limit=wall_limit, before_start=paused)
    out: List[Tuple[Outcome, Recorded]] = []
    for result in results:
        message = failure(result)
        out.append(((None, message), None) if message is not None else
                   result if result is not None else ((None, "not checked"), None))
    return out


class _Progress:
    """A transient rich progress bar on stderr, or nothing."""

    def __init__(self, enabled: bool, total: int) -> None:
        self._bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=Console(stderr=True, emoji=False), transient=True)
            self._task = self._bar.add_task("check", total=total)

    def __enter__(self) -> "_Progress":
        if self._bar is not None:
            self._bar.start()
        return self

    def advance(self, count: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, count)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The bar's refresh thread stopped meanwhile: a process forked while that thread holds
        a lock (stderr's, say) could hang on it."""
        if self._bar is None:
            yield
            return
        self._bar.stop()
        try:
            yield
        finally:
            self._bar.start()

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
