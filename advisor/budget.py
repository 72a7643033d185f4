"""The CPU time one file's analysis may take, and stopping an analysis that takes more.

An analysis runs on a thread of its own, with a large stack (libcst recurses natively while
parsing and in Python while visiting; a deeply nested but valid file then costs time instead of
a RecursionError or a segfault). The caller's thread waits for it and watches its CPU time, not
the wall clock, so that a busy machine does not make a file miss its budget. When the budget is
spent, or the caller no longer wants the result (the language server: the document changed),
the analysis is stopped:

- at the engine's checkpoints (between parse, model and each rule), by ``checkpoint``;
- anywhere in Python code, by raising an exception in the analysis thread
  (``PyThreadState_SetAsyncExc``), which takes effect at its next bytecode.

Native code (libcst's parser) cannot be stopped: the screens in guards.py and the file size
limit keep each native call short, and the command line's worker processes also carry a CPU
limit of the operating system (workers.py) that ends one that is not.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Optional, TypeVar

T = TypeVar("T")

DEEP_STACK_BYTES = 512 * 1024 * 1024
DEEP_RECURSION_LIMIT = 60_000
# How often the waiting thread looks at the analysis thread's CPU time and at ``cancelled``.
POLL_SECONDS = 0.05


class Stopped(BaseException):
    """An analysis was stopped. A BaseException, so that no ``except Exception`` on the way
    (in the rules, in libcst) mistakes it for a failure of its own and carries on."""


class BudgetExceeded(Stopped):
    """The analysis used up its CPU time."""


class Cancelled(Stopped):
    """The caller no longer wanted the result."""


_current = threading.local()


def checkpoint() -> None:
    """Raises BudgetExceeded or Cancelled when the analysis running on this thread must stop.
    Cheap (a clock read): called between the phases of an analysis."""
    limit = getattr(_current, "cpu_limit", None)
    if limit is not None and time.thread_time() > limit:
        raise BudgetExceeded()
    cancelled = getattr(_current, "cancelled", None)
    if cancelled is not None and cancelled():
        raise Cancelled()


def run_bounded(work: Callable[[], T], seconds: Optional[float] = None,
                cancelled: Optional[Callable[[], bool]] = None) -> T:
    """``work()`` on a thread with a large stack and a high recursion limit; its value, or
    BudgetExceeded once it has used ``seconds`` of CPU time (None: no limit), or Cancelled once
    ``cancelled()`` is true. Whatever else ``work`` raises is raised here."""
    state = _Run()

    def target() -> None:
        _current.cpu_limit = None if seconds is None else time.thread_time() + seconds
        _current.cancelled = cancelled
        try:
            try:
                state.value = work()
            finally:
                # From here on nothing may be raised into this thread; one raised before and
                # not yet delivered is withdrawn.
                with state.lock:
                    state.running = False
                    if state.raised is not None:
                        _raise_in(threading.get_ident(), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            state.error = exc

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        thread = threading.Thread(target=target, name="advisor-analysis", daemon=True)
    finally:
        threading.stack_size(old_stack)
    sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
    try:
        thread.start()
        if seconds is None and cancelled is None:
            thread.join()
        else:
            _watch(thread, state, seconds, cancelled)
    finally:
        sys.setrecursionlimit(old_limit)
    if state.error is not None:
        raise state.error
    return state.value


class _Run:
    __slots__ = ("lock", "running", "raised", "value", "error")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = True
        self.raised: Optional[type] = None  # what was raised into the thread (once at most)
        self.value = None
        self.error: Optional[BaseException] = None


def _watch(thread: threading.Thread, state: _Run, seconds: Optional[float],
           cancelled: Optional[Callable[[], bool]]) -> None:
    cpu_time = _cpu_clock(thread)
    started_cpu = cpu_time() if cpu_time is not None else None
    if started_cpu is None:
        cpu_time = None  # the thread ended already, or its clock cannot be read: the wall clock
    started_wall = time.monotonic()
    while True:
        thread.join(POLL_SECONDS)
        if not thread.is_alive():
            return
        if state.raised is not None:
            continue  # told to stop: it will at its next bytecode (or after a native call)
        reason: Optional[type] = None
        if seconds is not None:
            if cpu_time is not None:
                now = cpu_time()
                used = now - started_cpu if now is not None and started_cpu is not None else 0.0
            else:
                used = time.monotonic() - started_wall
            if used > seconds:
                reason = BudgetExceeded
        if reason is None and cancelled is not None and cancelled():
            reason = Cancelled
        if reason is None:
            continue
        with state.lock:
            if state.running and _raise_in(thread.ident, reason):
                state.raised = reason


def _cpu_clock(thread: threading.Thread) -> Optional[Callable[[], Optional[float]]]:
    """The thread's CPU time as a function (None once the thread is gone), where the platform
    tells it (Linux and most Unix); None elsewhere, and the budget is then counted on the wall
    clock."""
    try:
        clock = time.pthread_getcpuclockid(thread.ident)  # type: ignore[attr-defined,arg-type]
    except (AttributeError, OSError, OverflowError, TypeError):
        return None

    def read() -> Optional[float]:
        try:
            return time.clock_gettime(clock)
        except OSError:  # the thread has just ended
            return None

    return read


_async_exc = None  # (raise, withdraw), False where unavailable; set on first use


def _raise_in(ident: Optional[int], exc_type: Optional[type]) -> bool:
    """Raises ``exc_type`` in the thread ``ident`` at its next bytecode (None: withdraws one not
    yet raised). False where the interpreter offers no way to (not CPython)."""
    global _async_exc
    if _async_exc is None:
        try:
            import ctypes

            # PYFUNCTYPE: called with the GIL held, as the C API requires. Two prototypes of the
            # same function: py_object cannot carry the NULL that withdraws.
            name = ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
            _async_exc = (ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(name),
                          ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(name))
        except (ImportError, AttributeError, OSError):
            _async_exc = False
    if not _async_exc or ident is None:
        return False
    if exc_type is None:
        return _async_exc[1](ident, None) == 1
    return _async_exc[0](ident, exc_type) == 1
