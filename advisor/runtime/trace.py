"""`advisor trace -- python train.py ARGS...`: the parent side.

Builds the child command (advisor.runtime.trace_child in the user's interpreter), runs it with
a hard timeout, reads what it recorded, analyses the Chrome trace (GPU idle share, pageable
host-to-device copies, short kernels; CUDA only), matches the runtime evidence with the static
findings of the traced files, and renders the result as text or JSON. The report it writes
(DIR/trace-report.json) replaces the child's raw one and keeps every raw field.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, TextIO

from advisor.runtime import trace_channel as channel
from advisor.runtime.descendants import ProcessTree
from advisor.runtime.trace_channel import Receiver
from advisor.runtime.trace_child import CHROME_TRACE_NAME, REPORT_NAME

EXIT_OK, EXIT_SCRIPT_FAILED, EXIT_ERROR = 0, 1, 2
SYNC_CODES = ("GPU101", "GPU102", "GPU103", "GPU104", "GPU105")
SHORT_KERNEL_US = 10.0
# The deadlines `advisor trace` enforces on the traced interpreter (README, "Time limit"):
STARTUP_S = 300.0  # to import torch and reach the script's first line (slow on a loaded machine)
GRACE_S = 5.0  # on top of --time-limit, counted from the script's first line
WRAPUP_S = 120.0  # once the script has stopped: advisor's own profiler export
EXIT_GRACE_S = 5.0  # once the record is sent: for the process to exit

# Rule code -> substrings (lower case) of the torch warnings that confirm it at that line.
WARNING_MATCHES: Dict[str, Sequence[str]] = {
    "GPU303": ("torch.cuda.amp", "torch.cpu.amp", "is deprecated"),
    "GPU405": ("use_reentrant",),
    "GPU705": ("anomaly detection", "anomaly mode", "detect_anomaly"),
    "GPU201": ("pin_memory",),
    "GPU202": ("worker",),
    "GPU204": ("worker",),
    "GPU205": ("worker", "pin_memory", "prefetch_factor", "persistent_workers"),
}

# Rules that fire only for code that uses CUDA, and whose cost shows only on a GPU: on a machine
# without one, "no matching warning" says nothing, so they read "needs CUDA to confirm".
CUDA_ONLY: Dict[str, str] = {
    "GPU201": "copies from pageable memory cost time only on a GPU",
    "GPU202": "its cost is GPU time spent waiting for batches",
    "GPU204": "its cost is GPU time spent waiting for restarted workers",
}


class TraceError(Exception):
    """Usage errors and runs that produced no report: the CLI prints it and exits 2."""


@dataclass
class Command:
    python: str
    script: Path
    args: List[str]


def parse_command(argv: Sequence[str]) -> Command:
    """`python train.py ARGS` or `train.py ARGS` (then this interpreter runs it)."""
    argv = list(argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise TraceError("give the command to trace, e.g. advisor trace -- python train.py")
    first = os.path.basename(argv[0]).lower()
    if first.startswith("python") or first in ("py", "py.exe"):
        python, rest = argv[0], argv[1:]
    else:
        python, rest = sys.executable, argv
    if not rest or rest[0].startswith("-"):
        raise TraceError("only `python SCRIPT.py ARGS...` can be traced (no -m, -c or interpreter options)")
    script = Path(rest[0])
    if not script.is_file():
        raise TraceError(f"{script}: no such file")
    return Command(python, script, rest[1:])


def child_command(cmd: Command, steps: int, report_fd: int, trace_file: Path, time_limit: float) -> List[str]:
    return [cmd.python, "-m", "advisor.runtime.trace_child", "--steps", str(steps), "--report-fd", str(report_fd),
            "--trace-file", str(trace_file), "--time-limit", str(time_limit), "--", str(cmd.script), *cmd.args]


def _child_env() -> Dict[str, str]:
    """The user's interpreter may not have torch-advisor installed: put this copy on its path."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass
class Outcome:
    """What the parent saw of one run: the record (None if none came) and how it ended."""
    raw: Optional[Dict[str, Any]]
    status: Optional[int]  # the interpreter's exit status; negative: the signal that ended it
    phase: str = "starting"  # then "running" (the script), "stopping" (advisor's export), "reported"
    overdue: bool = False  # a deadline passed: advisor killed it (in `phase`)
    strays: int = 0  # processes the script left behind, killed when the trace ended


def run_trace(cmd: Command, steps: int, out: Path, time_limit: float, stdout: Optional[TextIO] = None) -> Dict[str, Any]:
    """Runs the child and returns its raw record; raises TraceError when there is none."""
    out.mkdir(parents=True, exist_ok=True)
    for name in (REPORT_NAME, CHROME_TRACE_NAME):  # a failed run must not leave an older report behind
        (out / name).unlink(missing_ok=True)
    private = Path(tempfile.mkdtemp(prefix="advisor-trace-"))  # 0700, a name the script cannot guess
    try:
        outcome = _run_child(cmd, steps, time_limit, private, stdout)
        raw = _checked(outcome, cmd, time_limit)
        out.mkdir(parents=True, exist_ok=True)  # again: the script may have deleted it
        chrome = private / CHROME_TRACE_NAME
        if chrome.is_file() and raw.get("chrome_trace"):
            shutil.move(str(chrome), str(out / CHROME_TRACE_NAME))
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return raw


def _run_child(cmd: Command, steps: int, time_limit: float, private: Path, stdout: Optional[TextIO]) -> Outcome:
    read_fd, write_fd = os.pipe()
    tree = ProcessTree()
    tree.start()
    argv = child_command(cmd, steps, write_fd, private / CHROME_TRACE_NAME, time_limit)
    try:
        proc = subprocess.Popen(argv, env=_child_env(), stdin=subprocess.DEVNULL, stdout=stdout,
                                pass_fds=(write_fd,), start_new_session=True)
    except FileNotFoundError:
        os.close(read_fd)
        tree.end(None)
        raise TraceError(f"{cmd.python}: no such interpreter") from None
    except BaseException:
        os.close(read_fd)
        tree.end(None)
        raise
    finally:
        os.close(write_fd)
    receiver = Receiver(read_fd, proc.pid)
    outcome = Outcome(raw=None, status=None)
    try:
        _follow(proc, receiver, time_limit, outcome)
    finally:
        outcome.strays = tree.end(proc.pid)
        proc.wait()
        receiver.close()
    outcome.status = proc.returncode
    return outcome


def _follow(proc: subprocess.Popen, receiver: Receiver, time_limit: float, outcome: Outcome) -> None:
    """Reads the channel until the child has exited, or kills it when a deadline passes:
    STARTUP_S to reach the script's first line, then the time limit plus GRACE_S, then
    WRAPUP_S for advisor's own work once the script stopped, then EXIT_GRACE_S to exit."""
    deadline = time.monotonic() + STARTUP_S
    while True:
        if _exited(proc):
            for message in receiver.drain():
                _take(message, outcome)
            return
        now = time.monotonic()
        if now >= deadline:
            outcome.overdue = True
            return
        for message in receiver.poll(min(0.2, deadline - now)):
            event = _take(message, outcome)
            now = time.monotonic()
            if event == channel.STARTED and outcome.phase == "starting":
                outcome.phase = "running"
                deadline = now + time_limit + GRACE_S
            elif event == channel.STOPPING and outcome.phase == "running":
                outcome.phase = "stopping"
                deadline = max(deadline, now + WRAPUP_S)
            elif event in (channel.REPORT, channel.NO_TORCH) and outcome.phase != "reported":
                outcome.phase = "reported"
                deadline = now + EXIT_GRACE_S
        if receiver.closed and not _exited(proc):
            time.sleep(0.05)  # the child closed the channel: only its exit is left to wait for


def _take(message: Dict[str, Any], outcome: Outcome) -> str:
    event = message["event"]
    if event == channel.REPORT and isinstance(message.get("record"), dict):
        outcome.raw = message["record"]
    elif event == channel.NO_TORCH:
        outcome.raw = {"stop": "no-torch", "error": {"type": "ImportError", "message": str(message.get("message"))}}
    return event


def _exited(proc: subprocess.Popen) -> bool:
    """Whether the child has exited, without reaping it: until it is reaped its pid (the
    process group's id) cannot be reused, so killing the group cannot hit a stranger."""
    if hasattr(os, "waitid"):
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


def _checked(outcome: Outcome, cmd: Command, time_limit: float) -> Dict[str, Any]:
    """The record, with notes on how the run ended; TraceError where there is none."""
    raw = outcome.raw
    if raw is not None and raw.get("stop") == "no-torch":
        raise TraceError(f"torch is not importable in {cmd.python}; `advisor trace` runs the script with that "
                         "interpreter, so install torch there (or name another python)")
    if raw is None and outcome.overdue:
        if outcome.phase == "starting":
            why = f"did not reach the script's first line within {STARTUP_S:g} s (importing torch?)"
        elif outcome.phase == "stopping":
            why = f"stopped, but the profiler's export did not finish within {WRAPUP_S:g} s"
        else:
            why = (f"did not stop at the {time_limit:g} s time limit, nor {GRACE_S:g} s later (it blocked "
                   "advisor's stop)")
        raise TraceError(f"the traced interpreter {why}; advisor killed it and every process it started, "
                         "and has no report")
    if raw is None:
        raise TraceError(f"the traced script ended the interpreter {_status_text(outcome.status)} before advisor "
                         "could report (os._exit, a signal, or a crash in native code); no report")
    notes = list(raw.get("notes") or [])
    if outcome.overdue:  # the record came, the process did not end
        notes.append(f"the script's process did not exit within {EXIT_GRACE_S:g} s of the end of the trace "
                     "(a non-daemon thread or an atexit handler?); advisor ended it")
    if outcome.strays:
        notes.append(f"the script left {outcome.strays} process{'es' if outcome.strays != 1 else ''} running; "
                     "advisor ended them")
    raw["notes"] = notes
    return raw


def _status_text(status: Optional[int]) -> str:
    if status is None:
        return "at an unknown point"
    if status < 0:
        try:
            return f"with signal {signal.Signals(-status).name}"
        except ValueError:
            return f"with signal {-status}"
    return f"with exit status {status}"


# -- the Chrome trace ----------------------------------------------------------------------------
def analyse_chrome_trace(path: Path, short_kernel_us: float = SHORT_KERNEL_US) -> Optional[Dict[str, Any]]:
    """GPU-side numbers from a Kineto trace; None without one, {"cuda": False} without GPU events."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    kernels: List[float] = []
    intervals: List[tuple] = []
    h2d = {"pageable": 0, "pinned": 0, "other": 0, "bytes": 0}
    other_copies = 0
    runtime_syncs = 0
    for event in events:
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        cat = str(event.get("cat", "")).lower()
        name = str(event.get("name", ""))
        ts, dur = float(event.get("ts", 0) or 0), float(event.get("dur", 0) or 0)
        if cat == "kernel":
            kernels.append(dur)
            intervals.append((ts, ts + dur))
        elif cat in ("gpu_memcpy", "gpu_memset"):
            intervals.append((ts, ts + dur))
            if "HtoD" in name:
                kind = "pageable" if "Pageable" in name else "pinned" if "Pinned" in name else "other"
                h2d[kind] += 1
                h2d["bytes"] += int((event.get("args") or {}).get("bytes", 0) or 0)
            elif cat == "gpu_memcpy":
                other_copies += 1
        elif cat == "cuda_runtime" and name in ("cudaStreamSynchronize", "cudaDeviceSynchronize",
                                                "cudaEventSynchronize"):
            runtime_syncs += 1
    if not intervals:
        return {"cuda": False}
    intervals.sort()
    busy = 0.0
    start = intervals[0][0]
    last = max(e for _, e in intervals)
    cur_s, cur_e = intervals[0]
    for s, e in intervals[1:]:
        if s > cur_e:
            busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += cur_e - cur_s
    span = last - start
    return {
        "cuda": True,
        "kernels": len(kernels),
        "short_kernels": sum(1 for d in kernels if d < short_kernel_us),
        "short_kernel_us": short_kernel_us,
        "gpu_span_us": round(span, 1),
        "gpu_busy_us": round(busy, 1),
        "gpu_idle_share": round(1 - busy / span, 4) if span > 0 else 0.0,
        "h2d_copies": h2d,
        "other_copies": other_copies,
        "runtime_syncs": runtime_syncs,
    }


# -- matching with the static findings -----------------------------------------------------------
def _static_findings(files: Sequence[str]) -> List[Any]:
    from advisor.config import ConfigFinder
    from advisor.engine import check_file

    finder = ConfigFinder()
    found = []
    for name in files:
        path = Path(name)
        try:
            config = finder.for_path(path)
        except Exception:  # noqa: BLE001 - a broken config must not hide the runtime report
            from advisor.config import DEFAULT_CONFIG as config
        result = check_file(path, config, str(path))
        found.extend(result.findings)
    return found


def _display(path: str, base: Path) -> str:
    try:
        return os.path.relpath(path, base) if not os.path.relpath(path, base).startswith("..") else path
    except ValueError:
        return path


def match(raw: Dict[str, Any], findings: Sequence[Any], base: Path) -> List[Dict[str, Any]]:
    """One entry per static finding: confirmed, needs-cuda, not-observed or not-checkable."""
    cuda = bool(raw.get("cuda"))
    armed_steps = 0
    if raw.get("sync_armed_after_step") is not None:
        armed_steps = max(0, int(raw.get("steps", 0)) - int(raw["sync_armed_after_step"]))
    syncs = raw.get("syncs", [])
    warns = raw.get("warnings", [])
    out = []
    for f in findings:
        path = os.path.realpath(f.filename)
        rows = range(f.start.row, f.end.row + 1)
        where = f"{_display(path, base)}:{f.start.row}"
        entry = {"code": f.code, "file": path, "line": f.start.row, "message": f.message}
        if f.code in SYNC_CODES:
            count = sum(s["count"] for s in syncs if s["file"] == path and s["line"] in rows)
            if not cuda:
                entry.update(status="needs-cuda", text=f"{f.code} at {where}: needs CUDA to confirm "
                             "(sync debug mode reports syncs only on a GPU)")
            elif count:
                entry.update(status="confirmed", syncs=count, steps=armed_steps,
                             text=f"{f.code} at {where} confirmed: {count} sync{'s' if count != 1 else ''} "
                             f"in {armed_steps} step{'s' if armed_steps != 1 else ''}")
            else:
                entry.update(status="not-observed", text=f"{f.code} at {where}: no sync seen at this line "
                             f"in {armed_steps} steps")
            out.append(entry)
            continue
        needles = WARNING_MATCHES.get(f.code)
        if needles is None:
            entry.update(status="not-checkable", text=f"{f.code} at {where}: no runtime signal for this rule")
            out.append(entry)
            continue
        hits = [w for w in warns if w["file"] == path and w["line"] in rows
                and any(n in w["message"].lower() for n in needles)]
        if hits:
            count = sum(w["count"] for w in hits)
            first = hits[0]["message"].splitlines()[0][:120]
            entry.update(status="confirmed", warnings=count,
                         text=f"{f.code} at {where} confirmed: {hits[0]['category']} {first!r}"
                         f"{f' ({count} times)' if count > 1 else ''}")
        elif not cuda and f.code in CUDA_ONLY:
            entry.update(status="needs-cuda", text=f"{f.code} at {where}: needs CUDA to confirm ({CUDA_ONLY[f.code]})")
        else:
            entry.update(status="not-observed", text=f"{f.code} at {where}: no matching warning during the run")
        out.append(entry)
    return out


def build_report(raw: Dict[str, Any], out: Path, base: Path) -> Dict[str, Any]:
    report = dict(raw)
    files = {raw["script"]} | {w["file"] for w in raw.get("warnings", []) if os.path.isfile(w["file"])} \
        | {s["file"] for s in raw.get("syncs", []) if os.path.isfile(s["file"])}
    findings = _static_findings(sorted(files))
    report["matches"] = match(raw, findings, base)
    chrome = out / CHROME_TRACE_NAME
    report["gpu"] = analyse_chrome_trace(chrome) if chrome.is_file() else None
    needs = []
    if not raw.get("cuda"):
        needs = ["syncs per line (torch.cuda.set_sync_debug_mode)", "GPU idle share",
                 "host-to-device copies from pageable memory", "short kernels"]
    report["needs_cuda"] = needs
    (out / REPORT_NAME).write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    return report


def exit_code(report: Dict[str, Any]) -> int:
    """1 when the script raised or exited with a non-zero status, else 0."""
    return EXIT_SCRIPT_FAILED if report.get("stop") in ("error", "exit") else EXIT_OK


# -- rendering -----------------------------------------------------------------------------------
_STOPS = {
    "steps": "stopped after {steps} optimizer steps",
    "time-limit": "stopped at the {time_limit_s:g} s time limit after {steps} optimizer steps",
    "finished": "the script finished after {steps} optimizer steps",
    "error": "the script raised after {steps} optimizer steps",
    "exit": "the script exited with status {exit_status} after {steps} optimizer steps",
}


class _Unknown:
    def __format__(self, spec: str) -> str:
        return "?"


class _Blank(dict):
    """A record's fields for the stop line; a field the record lacks reads as "?"."""

    def __missing__(self, key: str) -> _Unknown:
        return _Unknown()


def render_text(report: Dict[str, Any], out: Path, base: Path, stream: TextIO) -> None:
    w = stream.write
    script = _display(report["script"], base)
    w(f"advisor trace: {script} on {report.get('device')} (torch {report.get('torch')})\n")
    w(f"  {_STOPS.get(report.get('stop'), str(report.get('stop', '?'))).format_map(_Blank(report))}"
      f" in {report.get('elapsed_s', 0):.1f} s")
    if report.get("mean_step_s"):
        w(f", {report['mean_step_s'] * 1000:.1f} ms per step")
    w("\n")
    error = report.get("error")
    if error:
        at = f" at {_display(error['file'], base)}:{error['line']}" if error.get("file") else ""
        w(f"  script error{at}: {error['type']}: {error['message'].splitlines()[0] if error['message'] else ''}\n")
    if report.get("exit_message"):
        w(f"  exit message: {str(report['exit_message']).splitlines()[0][:200]}\n")
    matches = report.get("matches", [])
    groups = [("confirmed", "Confirmed"), ("needs-cuda", "Needs CUDA to confirm"),
              ("not-observed", "Not observed in this run")]
    for status, title in groups:
        rows = [m for m in matches if m["status"] == status]
        if rows:
            w(f"\n{title}:\n")
            for m in rows:
                w(f"  {m['text']}\n")
    syncs = report.get("syncs", [])
    if syncs:
        w("\nSyncs per line (after the warm-up):\n")
        for s in sorted(syncs, key=lambda s: -s["count"]):
            w(f"  {_display(s['file'], base)}:{s['line']}: {s['count']}\n")
    warns = report.get("warnings", [])
    if warns:
        w("\nWarnings:\n")
        for item in warns:
            first = item["message"].splitlines()[0] if item["message"] else ""
            w(f"  {_display(item['file'], base)}:{item['line']}: {item['category']} ({item['count']}x): {first[:140]}\n")
    profile = report.get("profile")
    if profile:
        w(f"\nProfile ({profile.get('steps', 0)} steps, {profile.get('events', 0)} events):\n")
        for row in profile.get("scalar_reads", [])[:5]:
            w(f"  tensor values read on the host (aten::_local_scalar_dense): {row['count']} under {row['where']}\n")
    gpu = report.get("gpu")
    if gpu and gpu.get("cuda"):
        h2d = gpu["h2d_copies"]
        w(f"  GPU idle {gpu['gpu_idle_share'] * 100:.1f}% of {gpu['gpu_span_us'] / 1000:.1f} ms; "
          f"{gpu['kernels']} kernels, {gpu['short_kernels']} shorter than {gpu['short_kernel_us']:g} us; "
          f"host-to-device copies: {h2d['pageable']} pageable, {h2d['pinned']} pinned\n")
    if report.get("needs_cuda"):
        w(f"\nNo CUDA device: {', '.join(report['needs_cuda'])} need a GPU run.\n")
    for note in report.get("notes", []):
        w(f"note: {note}\n")
    files = [REPORT_NAME] + ([CHROME_TRACE_NAME] if (out / CHROME_TRACE_NAME).is_file() else [])
    w(f"\nWrote {', '.join(str(out / f) for f in files)}\n")


def trace(argv: Sequence[str], steps: int, time_limit: float, out: Path, fmt: str) -> int:
    """The whole command; returns the exit status (0 ran, 1 the script raised, 2 error)."""
    cmd = parse_command(argv)
    sys.stderr.write(f"advisor trace: running {cmd.script} with {cmd.python}; this executes your code.\n")
    sys.stderr.flush()
    # In JSON mode the script's own prints go to stderr, so that stdout stays one JSON document.
    base = Path.cwd()
    raw = run_trace(cmd, steps, out, time_limit, stdout=sys.stderr if fmt == "json" else None)
    report = build_report(raw, out, base)
    if fmt == "json":
        json.dump(report, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        render_text(report, out, base, sys.stdout)
    return exit_code(report)
