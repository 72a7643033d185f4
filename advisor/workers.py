"""Worker processes that hand back each file's result as soon as it is done, so that a worker
that dies (a segfault in native code, the operating system's CPU limit, the OOM killer) costs
the one file it was on: the parent knows which that was, reports it, and gives the rest of the
worker's share to a new worker.

A pool from concurrent.futures cannot do that: when one of its workers dies it fails every
task in flight or queued ("BrokenProcessPool"), good files included.

The parent sends each worker a batch of (position, item) pairs and reads back one message per
item: (position, True, result) or (position, False, error text). A batch goes out only to an
idle worker, so neither side ever blocks writing to the other.
"""

from __future__ import annotations

import math
import time
from collections import deque

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

# How often the parent looks for a worker stuck on one item past ``wall_limit``.
_POLL_SECONDS = 1.0


class Died:
    """Why a worker ended while it was on an item: its exit code (negative: the signal number),
    or ``stuck`` when the parent ended it for overrunning the wall-clock limit."""

    __slots__ = ("exitcode", "stuck")

    def __init__(self, exitcode: Optional[int], stuck: bool = False) -> None:
        self.exitcode = exitcode
        self.stuck = stuck

    def describe(self) -> str:
        if self.stuck:
            return "the worker process stopped responding and was ended"
        code = self.exitcode
        if code is not None and code < 0:
            import signal

            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker process was killed by {name}"
        return f"the worker process exited with status {code}"


def map_isolated(task: Callable[..., Any], args: Tuple[Any, ...], items: Sequence[Any], batches: List[List[int]],
                 workers: int, context: Any, on_died: Callable[[Any, Died], Any], on_result: Callable[[int], None],
                 cpu_seconds: Optional[Callable[[Any], Optional[float]]] = None,
                 wall_limit: Optional[Callable[[Any], Optional[float]]] = None,
                 before_start: Optional[Callable[[], Any]] = None) -> List[Any]:
    """``task(item, *args)`` for every item, on up to ``workers`` processes; results in the items'
    order. ``batches`` group the items' positions (the order they are handed out in).

    - ``on_died(item, Died)``: the result of an item whose worker died on it;
    - ``on_result(count)``: called as results arrive (progress);
    - ``cpu_seconds(item)``: a CPU-time limit the operating system enforces on the worker while
      it is on that item (SIGXCPU ends it), for code that cannot be stopped from within;
    - ``wall_limit(item)``: seconds after which the parent ends a worker stuck on that item;
    - ``before_start()``: a context manager entered around starting a replacement worker (the
      caller pauses its own threads there: forking while one holds a lock can hang the child).
    """
    from multiprocessing.connection import wait

    results: List[Any] = [None] * len(items)
    queue: Deque[List[int]] = deque(batch for batch in batches if batch)
    live: Dict[Any, _Worker] = {}

    def start() -> None:
        parent_end, child_end = context.Pipe()
        process = context.Process(target=_serve, args=(child_end, task, args, cpu_seconds), daemon=True)
        process.start()
        child_end.close()
        worker = _Worker(process, parent_end)
        live[parent_end] = worker
        assign(worker)

    def assign(worker: _Worker) -> None:
        if not queue:
            retire(worker)
            return
        batch = queue.popleft()
        worker.pending = deque(batch)
        worker.since = time.monotonic()
        try:
            worker.conn.send([(position, items[position]) for position in batch])
        except (OSError, EOFError):
            pass  # it died already: the next wait() reports it

    def retire(worker: _Worker) -> None:
        live.pop(worker.conn, None)
        try:
            worker.conn.send(None)
        except (OSError, EOFError):
            pass
        worker.conn.close()
        worker.process.join()

    def bury(worker: _Worker, died: Died) -> None:
        live.pop(worker.conn, None)
        worker.conn.close()
        worker.process.join()
        if died.exitcode is None:
            died.exitcode = worker.process.exitcode
        if worker.pending:
            position = worker.pending.popleft()
            results[position] = on_died(items[position], died)
            on_result(1)
        if worker.pending:
            queue.appendleft(list(worker.pending))  # the rest of its batch goes first
        if queue and len(live) < workers:
            if before_start is not None:
                with before_start():
                    start()
            else:
                start()

    try:
        for _ in range(min(workers, len(queue))):
            start()
        while live:
            ready = wait(list(live), timeout=_POLL_SECONDS if wall_limit is not None else None)
            for conn in ready:
                worker = live.get(conn)
                if worker is None:
                    continue
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    bury(worker, Died(None))
                    continue
                position, ok, payload = message
                results[position] = payload if ok else _Failed(payload)
                if worker.pending and worker.pending[0] == position:
                    worker.pending.popleft()
                worker.since = time.monotonic()
                on_result(1)
                if not worker.pending:
                    assign(worker)
            if wall_limit is not None:
                now = time.monotonic()
                for worker in list(live.values()):
                    if not worker.pending:
                        continue
                    limit = wall_limit(items[worker.pending[0]])
                    if limit is not None and now - worker.since > limit:
                        worker.process.kill()
                        bury(worker, Died(None, stuck=True))
    finally:
        for worker in list(live.values()):
            worker.process.kill()
            worker.conn.close()
            worker.process.join()
    return results


class _Failed:
    """A task that raised in the worker or whose result could not be sent back."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def failure(result: Any) -> Optional[str]:
    """The error text when ``result`` stands for a task that raised, else None."""
    return result.message if isinstance(result, _Failed) else None


class _Worker:
    __slots__ = ("process", "conn", "pending", "since")

    def __init__(self, process: Any, conn: Any) -> None:
        self.process = process
        self.conn = conn
        self.pending: Deque[int] = deque()  # positions sent and not answered yet, in order
        self.since = time.monotonic()  # when its current item began (its last message)


def _serve(conn: Any, task: Callable[..., Any], args: Tuple[Any, ...],
           cpu_seconds: Optional[Callable[[Any], Optional[float]]]) -> None:
    """The worker's loop: batches in, one message per item out, until told to stop."""
    _no_core_files()
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for position, item in batch:
            if cpu_seconds is not None:
                _limit_cpu(cpu_seconds(item))
            try:
                message = (position, True, task(item, *args))
            except Exception as exc:  # noqa: BLE001 - one item's failure is reported, not fatal
                message = (position, False, f"{type(exc).__name__}: {exc}")
            try:
                conn.send(message)
            except (EOFError, BrokenPipeError):
                return
            except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
                conn.send((position, False, f"{type(exc).__name__}: {exc}"))


def _no_core_files() -> None:
    """A worker ended by the CPU limit or by a crash would otherwise leave a core file of
    hundreds of megabytes, where core files are enabled (often the folder being checked)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    except (ImportError, OSError, ValueError):
        pass


def _limit_cpu(seconds: Optional[float]) -> None:
    """Lets this process use ``seconds`` more CPU time before the system sends SIGXCPU (which
    ends it). Nothing where the platform has no such limit."""
    try:
        import resource
    except ImportError:
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if seconds is None:
            wanted = hard
        else:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            wanted = math.ceil(usage.ru_utime + usage.ru_stime + seconds)
            if hard != resource.RLIM_INFINITY:
                wanted = min(wanted, hard)
        if wanted != soft:
            resource.setrlimit(resource.RLIMIT_CPU, (wanted, hard))
    except (OSError, ValueError):
        pass
