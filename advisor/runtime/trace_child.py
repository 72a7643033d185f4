"""The traced side of `advisor trace`: runs the user's script inside this interpreter.

    python -m advisor.runtime.trace_child --steps N --report-fd FD --trace-file PATH
        [--time-limit S] -- script.py ARGS...

Imports only the standard library, torch and two small advisor modules, so that it runs in
whatever interpreter the user names. What it records goes to the parent (advisor.runtime.trace)
through the pipe FD as one `report` message; the Chrome trace of the profiled steps goes to
PATH, in a private folder the parent made. Neither is reachable through the script's working
folder or advisor's output folder, which the script may change or delete.

- Steps: a global optimizer step post-hook counts `optimizer.step()` calls and, after N,
  raises `_StopTrace` (a BaseException, so that a script's `except Exception` cannot swallow
  it). Scripts without a torch optimizer stop at the wall-clock limit (`_TimeLimit`, raised
  from SIGALRM). A script that catches that or replaces the SIGALRM handler is stopped by a
  watchdog thread OVERDUE_S later, which sends what was recorded and ends the process; the
  parent kills the whole process group a little after that in any case.
- Warnings: every warning (`simplefilter("always")`) is attributed to the first frame outside
  torch, site-packages, the standard library and this file, and counted per (file, line).
  On CUDA, `torch.cuda.set_sync_debug_mode("warn")` is armed after the warm-up steps, so that
  every synchronising call shows up as a warning at the user's line.
- Profiler: CPU (+CUDA) activities with stacks for `--profile-steps` steps after the warm-up.
"""

from __future__ import annotations

import argparse
import os
import runpy
import signal
import sys
import sysconfig
import threading
import time
import traceback
import warnings
from collections import defaultdict
from typing import Any, Dict, List, Optional, Tuple

from advisor.runtime import trace_channel as channel
from advisor.runtime.torch_import import import_torch

SYNC_WARNING = "called a synchronizing CUDA operation"
NO_TORCH_EXIT = 3
REPORT_NAME = "trace-report.json"
CHROME_TRACE_NAME = "trace.json"
OVERDUE_S = 2.0  # after the time limit: the watchdog's wait before it ends a script that ignored it


class _StopTrace(BaseException):
    """Raised from the optimizer hook after N steps."""


class _TimeLimit(BaseException):
    """Raised in the main thread when the wall-clock limit is reached."""


def _parse(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m advisor.runtime.trace_child")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--report-fd", type=int, required=True)
    parser.add_argument("--trace-file", required=True, help="where the Chrome trace goes")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--warmup", type=int, default=None, help="steps before syncs and the profiler are armed")
    parser.add_argument("--profile-steps", type=int, default=5)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    if "--" in argv:
        cut = argv.index("--")
        argv = argv[:cut] + argv[cut + 1:]
    return parser.parse_args(argv)


def _excluded_roots() -> List[str]:
    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.realpath(path))
    for path in sys.path:
        if path.rstrip("/\\").endswith(("site-packages", "dist-packages")):
            roots.add(os.path.realpath(path))
    return sorted(roots)


class Recorder:
    """Per-(file, line) counts of warnings and syncs, per optimizer step."""

    def __init__(self, script: str) -> None:
        self.script = os.path.realpath(script)
        self.roots = _excluded_roots()
        self.here = os.path.realpath(__file__)
        self.step = 0
        self.armed_at: Optional[int] = None  # the step after which sync debug mode was on
        self.warnings: Dict[Tuple[str, int, str, str], Dict[str, Any]] = {}
        self.syncs: Dict[Tuple[str, int], Dict[str, Any]] = {}
        self._cache: Dict[str, bool] = {}

    def is_user_file(self, filename: str) -> bool:
        known = self._cache.get(filename)
        if known is not None:
            return known
        if not filename or filename.startswith("<"):
            result = False
        else:
            real = os.path.realpath(filename)
            if real == self.script:
                result = True
            elif real == self.here or os.sep + "torch" + os.sep in real:
                result = False
            else:
                result = not any(real == root or real.startswith(root + os.sep) for root in self.roots)
        self._cache[filename] = result
        return result

    def user_frame(self, filename: str, lineno: int) -> Tuple[str, int]:
        """The warning's own location if it is the user's, else the innermost user frame."""
        if self.is_user_file(filename):
            return os.path.realpath(filename), lineno
        frame = sys._getframe(1)
        while frame is not None:
            if self.is_user_file(frame.f_code.co_filename):
                return os.path.realpath(frame.f_code.co_filename), frame.f_lineno
            frame = frame.f_back
        return filename, lineno

    def showwarning(self, message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG002
        where_file, where_line = self.user_frame(filename, lineno)
        text = str(message)
        if SYNC_WARNING in text:
            entry = self.syncs.setdefault((where_file, where_line), {"count": 0, "steps": set()})
            entry["count"] += 1
            entry["steps"].add(self.step)
            return
        first = text.strip().splitlines()[0] if text.strip() else ""
        key = (where_file, where_line, category.__name__, first)
        entry = self.warnings.setdefault(key, {"count": 0, "steps": set(), "message": text.strip()[:2000],
                                               "origin": f"{filename}:{lineno}"})
        entry["count"] += 1
        entry["steps"].add(self.step)

    def as_json(self) -> Dict[str, Any]:
        return {
            "warnings": [
                {"file": f, "line": ln, "category": cat, "message": e["message"], "count": e["count"],
                 "steps": sorted(e["steps"]), "origin": e["origin"]}
                for (f, ln, cat, _), e in sorted(self.warnings.items(), key=lambda kv: (kv[0][0], kv[0][1]))
            ],
            "syncs": [
                {"file": f, "line": ln, "count": e["count"], "steps": sorted(e["steps"])}
                for (f, ln), e in sorted(self.syncs.items())
            ],
        }


def _python_label(event) -> Optional[str]:
    """`train.py(37): step` for the innermost user-code Python frame above a profiler event."""
    parent = event.cpu_parent
    while parent is not None:
        name = parent.name
        if "(" in name and "): " in name and not name.startswith(("torch/", "<built-in")) \
                and "site-packages" not in name and "/torch/" not in name:
            # The python_function event's line is not the call's line: keep the file and function.
            path, _, func = name.partition("): ")
            return f"{path.rsplit('(', 1)[0]}: {func}"
        parent = parent.cpu_parent
    return None


def _profile_summary(prof) -> Dict[str, Any]:
    """Counts over the profiler's events: host reads of tensor values, explicit syncs, copies."""
    scalar: Dict[str, int] = defaultdict(int)
    stream_syncs: Dict[str, int] = defaultdict(int)
    copies = 0
    ops = 0
    for event in prof.events():
        ops += 1
        if event.name == "aten::_local_scalar_dense":
            scalar[_python_label(event) or "<unknown>"] += 1
        elif event.name in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"):
            stream_syncs[_python_label(event) or "<unknown>"] += 1
        elif event.name in ("aten::copy_", "aten::_to_copy"):
            copies += 1
    return {
        "events": ops,
        "scalar_reads": [{"where": k, "count": v} for k, v in sorted(scalar.items(), key=lambda kv: -kv[1])],
        "runtime_syncs": [{"where": k, "count": v} for k, v in sorted(stream_syncs.items(), key=lambda kv: -kv[1])],
        "copy_ops": copies,
    }


class Tracer:
    def __init__(self, opts: argparse.Namespace, torch) -> None:
        self.opts = opts
        self.torch = torch
        self.cuda = bool(torch.cuda.is_available())
        self.recorder = Recorder(opts.script)
        self.warmup = opts.warmup if opts.warmup is not None else (1 if opts.steps >= 3 else 0)
        self.prof = None
        self.prof_state = "off"  # off -> running -> done
        self.prof_started_step = 0
        self.prof_summary: Optional[Dict[str, Any]] = None
        self.step_times: List[float] = []
        self.notes: List[str] = []
        self.script = os.path.abspath(opts.script)  # before the script can change folder
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        self._reported = False

    # -- the profiler --------------------------------------------------------------------------
    def _start_profiler(self) -> None:
        if self.prof_state != "off" or self.opts.profile_steps <= 0:
            return
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if self.cuda:
            activities.append(ProfilerActivity.CUDA)
        try:
            self.prof = profile(activities=activities, with_stack=True, record_shapes=False)
            self.prof.start()
            self.prof_state = "running"
            self.prof_started_step = self.recorder.step
        except Exception as exc:  # noqa: BLE001 - a profiler failure must not end the trace
            self.notes.append(f"profiler could not start: {type(exc).__name__}: {exc}")
            self.prof_state = "done"

    def _stop_profiler(self) -> None:
        if self.prof_state != "running":
            return
        self.prof_state = "done"
        try:
            if self.cuda:
                self.torch.cuda.synchronize()
            self.prof.stop()
            self.prof.export_chrome_trace(self.opts.trace_file)
            self.prof_summary = _profile_summary(self.prof)
            self.prof_summary["steps"] = self.recorder.step - self.prof_started_step
        except Exception as exc:  # noqa: BLE001
            self.notes.append(f"profiler could not finish: {type(exc).__name__}: {exc}")

    # -- the step hook -------------------------------------------------------------------------
    def on_step(self, optimizer, args, kwargs) -> None:  # noqa: ARG002
        self.recorder.step += 1
        self.step_times.append(time.perf_counter())
        step = self.recorder.step
        if step == self.warmup:
            self._arm()
        if self.prof_state == "running" and step - self.prof_started_step >= self.opts.profile_steps:
            self._stop_profiler()
        if step >= self.opts.steps:
            raise _StopTrace()

    def _arm(self) -> None:
        if self.cuda and self.recorder.armed_at is None:
            try:
                self.torch.cuda.set_sync_debug_mode("warn")
                self.recorder.armed_at = self.recorder.step
            except Exception as exc:  # noqa: BLE001
                self.notes.append(f"sync debug mode unavailable: {exc}")
        self._start_profiler()

    def _disarm(self) -> None:
        if self.recorder.armed_at is not None:
            try:
                self.torch.cuda.set_sync_debug_mode(0)
            except Exception:  # noqa: BLE001
                pass

    # -- the run -------------------------------------------------------------------------------
    def run(self) -> Optional[Dict[str, Any]]:
        """Runs the script; returns the record, or None where the watchdog already sent it."""
        opts = self.opts
        script = self.script
        import importlib

        hooks = importlib.import_module("torch.optim.optimizer")
        handle = hooks.register_optimizer_step_post_hook(self.on_step)
        previous_show = warnings.showwarning
        filters = warnings.filters[:]
        warnings.simplefilter("always")
        warnings.showwarning = self.recorder.showwarning
        sys.argv = [script, *opts.args]
        sys.path[0] = os.path.dirname(script)
        channel.send(opts.report_fd, channel.STARTED)
        self.started = time.perf_counter()
        timer = self._start_timer()
        watchdog = self._start_watchdog()
        result: Dict[str, Any] = {"stop": "finished", "error": None}
        try:
            if self.warmup == 0:
                self._arm()
            runpy.run_path(script, run_name="__main__")
        except _StopTrace:
            result["stop"] = "steps"
        except _TimeLimit:
            result["stop"] = "time-limit"
        except SystemExit as exc:
            status = _exit_status(exc.code)
            if status != 0:
                result["stop"] = "exit"
                result["exit_status"] = status
                if not isinstance(exc.code, int):
                    result["exit_message"] = str(exc.code)[:2000]
        except BaseException as exc:  # noqa: BLE001 - the user's error is data for the report
            result["stop"] = "error"
            result["error"] = self._describe(exc)
        finally:
            self._cancel_timer(timer)
            elapsed = time.perf_counter() - self.started
            if not self._claim():
                return None  # the watchdog reported and is ending the process
            if watchdog is not None:
                watchdog.cancel()
            # The script has stopped: what follows is advisor's own (the profiler's export).
            channel.send(opts.report_fd, channel.STOPPING)
            self._disarm()
            warnings.showwarning = previous_show
            warnings.filters[:] = filters
            handle.remove()
            try:
                self._stop_profiler()
            except BaseException as exc:  # noqa: BLE001
                self.notes.append(f"profiler: {exc}")
        return self._record(result, elapsed)

    def _record(self, result: Dict[str, Any], elapsed: float) -> Dict[str, Any]:
        opts = self.opts
        times = list(self.step_times)
        result = dict(result)
        result.update({
            "script": self.script,
            "argv": list(opts.args),
            "cuda": self.cuda,
            "device": self.torch.cuda.get_device_name(0) if self.cuda else "cpu",
            "torch": self.torch.__version__,
            "python": sys.version.split()[0],
            "steps": self.recorder.step,
            "steps_requested": opts.steps,
            "warmup": self.warmup,
            "sync_armed_after_step": self.recorder.armed_at,
            "elapsed_s": round(elapsed, 3),
            "mean_step_s": round((times[-1] - times[0]) / (len(times) - 1), 6) if len(times) > 1 else None,
            "time_limit_s": opts.time_limit,
            "profile": self.prof_summary,
            "chrome_trace": CHROME_TRACE_NAME if self.prof_summary is not None else None,
            "notes": list(self.notes),
        })
        result.update(self.recorder.as_json())
        return result

    # -- the watchdog --------------------------------------------------------------------------
    def _claim(self) -> bool:
        """True for the first caller only: the main thread's end or the watchdog's report."""
        with self._lock:
            if self._reported:
                return False
            self._reported = True
            return True

    def _start_watchdog(self) -> Optional[threading.Timer]:
        limit = self.opts.time_limit
        if limit is None or limit <= 0:
            return None
        timer = threading.Timer(limit + OVERDUE_S, self._overdue)
        timer.daemon = True
        timer.start()
        return timer

    def _overdue(self) -> None:
        """The script outlived the time limit by OVERDUE_S: it caught the alarm or replaced its
        handler. Send what was recorded so far and end the process, and with it the script."""
        if not self._claim():
            return
        self.notes.append(f"the script did not stop at the {self.opts.time_limit:g} s time limit (it caught "
                          f"advisor's stop or replaced its SIGALRM handler); advisor ended it {OVERDUE_S:g} s later")
        if self.prof_state == "running":
            self.notes.append("the profiler was still running: no Chrome trace")
        elapsed = time.perf_counter() - self.started
        for _ in range(3):  # the main thread may add a warning while the record is copied
            try:
                record = self._record({"stop": "time-limit", "error": None}, elapsed)
                break
            except RuntimeError:
                continue
        else:
            record = {"stop": "time-limit", "error": None, "script": self.script,
                      "steps": self.recorder.step, "notes": list(self.notes)}
        channel.send(self.opts.report_fd, channel.REPORT, record=record)
        _flush_std()
        os._exit(0)

    def _describe(self, exc: BaseException) -> Dict[str, Any]:
        frames = traceback.extract_tb(exc.__traceback__)
        user = [f for f in frames if self.recorder.is_user_file(f.filename)]
        last = user[-1] if user else (frames[-1] if frames else None)
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return {"type": type(exc).__name__, "message": str(exc)[:2000],
                "file": os.path.realpath(last.filename) if last else None,
                "line": last.lineno if last else None, "traceback": text[-8000:]}

    def _start_timer(self):
        limit = self.opts.time_limit
        if limit is None or limit <= 0:
            return None
        if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
            def on_alarm(signum, frame):  # noqa: ARG001
                raise _TimeLimit()

            previous = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, limit)
            return ("signal", previous)
        import _thread

        timer = threading.Timer(limit, _thread.interrupt_main)
        timer.daemon = True
        timer.start()
        return ("thread", timer)

    def _cancel_timer(self, timer) -> None:
        if timer is None:
            return
        kind, value = timer
        if kind == "signal":
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, value)
        else:
            value.cancel()


def _exit_status(code: Any) -> int:
    """The status `sys.exit(code)` gives the process: None 0, an int itself, anything else 1."""
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    return 1


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream must not stop the report
            pass


def main(argv: Optional[List[str]] = None) -> int:
    opts = _parse(list(sys.argv[1:] if argv is None else argv))
    fd = opts.report_fd
    try:
        os.set_inheritable(fd, False)  # programs the script starts do not get the channel
    except OSError:
        sys.stderr.write(f"advisor trace: the report channel (fd {fd}) is not open\n")
        return 2
    me = os.getpid()
    try:
        torch = import_torch()
    except ImportError as exc:
        channel.send(fd, channel.NO_TORCH, message=str(exc), python=sys.executable)
        sys.stderr.write(f"advisor trace: torch is not importable in {sys.executable}: {exc}\n")
        return NO_TORCH_EXIT
    tracer = Tracer(opts, torch)
    result = tracer.run()
    _flush_std()
    if result is None:
        threading.Event().wait(60)  # the watchdog is sending the record and ends the process
        return 0
    if os.getpid() != me:
        # A forked copy of this interpreter that ran to the script's end: not the traced run.
        return int(result.get("exit_status") or (1 if result["stop"] == "error" else 0))
    channel.send(fd, channel.REPORT, record=result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
