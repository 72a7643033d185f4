"""The traced side of `advisor trace`: runs the user's script inside this interpreter.

    python -m advisor.runtime.trace_child --steps N --out DIR [--time-limit S] -- script.py ARGS...

Imports only the standard library and torch, so that it runs in whatever interpreter the
user names. What it records goes to DIR/trace-report.json (the parent, advisor.runtime.trace,
reads it, matches it with the static findings and rewrites it) and DIR/trace.json (the
Chrome trace of the profiled steps).

- Steps: a global optimizer step post-hook counts `optimizer.step()` calls and, after N,
  raises `_StopTrace` (a BaseException, so that a script's `except Exception` cannot swallow
  it). Scripts without a torch optimizer stop at the wall-clock limit (`_TimeLimit`).
- Warnings: every warning (`simplefilter("always")`) is attributed to the first frame outside
  torch, site-packages, the standard library and this file, and counted per (file, line).
  On CUDA, `torch.cuda.set_sync_debug_mode("warn")` is armed after the warm-up steps, so that
  every synchronising call shows up as a warning at the user's line.
- Profiler: CPU (+CUDA) activities with stacks for `--profile-steps` steps after the warm-up.
"""

from __future__ import annotations

import argparse
import json
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

SYNC_WARNING = "called a synchronizing CUDA operation"
NO_TORCH_EXIT = 3  # the parent turns this into its "torch is not importable" message
REPORT_NAME = "trace-report.json"
CHROME_TRACE_NAME = "trace.json"


class _StopTrace(BaseException):
    """Raised from the optimizer hook after N steps."""


class _TimeLimit(BaseException):
    """Raised in the main thread when the wall-clock limit is reached."""


def _parse(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m advisor.runtime.trace_child")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--out", required=True)
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
        self.stop_after_raise = False
        self.notes: List[str] = []

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
            self.prof.export_chrome_trace(os.path.join(self.opts.out, CHROME_TRACE_NAME))
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
    def run(self) -> Dict[str, Any]:
        opts = self.opts
        script = os.path.abspath(opts.script)
        import importlib

        hooks = importlib.import_module("torch.optim.optimizer")
        handle = hooks.register_optimizer_step_post_hook(self.on_step)
        previous_show = warnings.showwarning
        filters = warnings.filters[:]
        warnings.simplefilter("always")
        warnings.showwarning = self.recorder.showwarning
        sys.argv = [script, *opts.args]
        sys.path[0] = os.path.dirname(script)
        timer = self._start_timer()
        started = time.perf_counter()
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
            code = exc.code
            if code not in (None, 0):
                result["stop"] = "error"
                result["error"] = {"type": "SystemExit", "message": f"exit status {code}", "file": None,
                                   "line": None, "traceback": ""}
        except BaseException as exc:  # noqa: BLE001 - the user's error is data for the report
            result["stop"] = "error"
            result["error"] = self._describe(exc)
        finally:
            self._cancel_timer(timer)
            elapsed = time.perf_counter() - started
            self._disarm()
            warnings.showwarning = previous_show
            warnings.filters[:] = filters
            handle.remove()
            try:
                self._stop_profiler()
            except BaseException as exc:  # noqa: BLE001
                self.notes.append(f"profiler: {exc}")
        times = self.step_times
        result.update({
            "script": script,
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
            "notes": self.notes,
        })
        result.update(self.recorder.as_json())
        return result

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


def main(argv: Optional[List[str]] = None) -> int:
    opts = _parse(list(sys.argv[1:] if argv is None else argv))
    os.makedirs(opts.out, exist_ok=True)
    report_path = os.path.join(opts.out, REPORT_NAME)
    try:
        import torch
    except ImportError as exc:
        with open(report_path, "w", encoding="utf-8") as out:
            json.dump({"stop": "no-torch", "error": {"type": "ImportError", "message": str(exc)},
                       "python": sys.executable}, out)
        sys.stderr.write(f"advisor trace: torch is not importable in {sys.executable}: {exc}\n")
        return NO_TORCH_EXIT
    tracer = Tracer(opts, torch)
    result = tracer.run()
    with open(report_path, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=2, default=str)
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
