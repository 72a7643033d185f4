"""Run one probe in this (child) process: `python -m advisor.runtime.child CODE PARAMS_JSON`.

Prints the probe's result as one JSON object on the last line of stdout. A probe that raises
is reported as `error: ...` (`skipped: out of memory` for an OOM); the parent (`run_in_child`)
turns a timeout, a crash or a missing answer into a verdict too, so one probe never ends a run.

For tests, ADVISOR_PROBE_FAULT="CODE:hang,CODE:crash,CODE:raise,CODE:oom" makes those probes
misbehave in the child.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Dict, Optional

from advisor.runtime.result import error, skipped

MARKER = "ADVISOR-PROBE-RESULT "
DEFAULT_TIMEOUT_S = 60.0  # includes importing torch and creating the CUDA context


def _fault(code: str) -> Optional[str]:
    for item in os.environ.get("ADVISOR_PROBE_FAULT", "").split(","):
        name, _, kind = item.partition(":")
        if name.strip() == code:
            return kind.strip()
    return None


def _is_oom(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"


def run_here(code: str, params: Dict[str, Any]) -> Dict[str, Any]:
    from advisor.runtime.registry import get_probe

    probe = get_probe(code)
    if probe is None:
        return error(f"no probe for {code}")
    fault = _fault(code)
    try:
        if fault == "hang":
            time.sleep(3600)
        elif fault == "crash":
            sys.stdout.flush()
            os.abort()
        elif fault == "raise":
            raise RuntimeError("injected probe failure")
        elif fault == "oom":
            raise RuntimeError("CUDA out of memory. Tried to allocate 1 GiB (injected)")
        return probe.function()(params)
    except Exception as exc:  # noqa: BLE001 - reported as this probe's verdict
        if _is_oom(exc):
            return skipped("out of memory")
        return error(f"{type(exc).__name__}: {exc}")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.stderr.write("usage: python -m advisor.runtime.child CODE PARAMS_JSON\n")
        return 2
    from advisor.runtime.torch_import import import_torch

    try:
        import_torch()  # first here, so that its import warnings are filtered
    except ImportError:
        pass  # the probe reports it
    result = run_here(argv[0], json.loads(argv[1]))
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


def run_in_child(code: str, params: Dict[str, Any], timeout: float = DEFAULT_TIMEOUT_S) -> Dict[str, Any]:
    """The probe's result from a fresh process; timeouts and crashes become verdicts."""
    cmd = [sys.executable, "-m", "advisor.runtime.child", code, json.dumps(params)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # its own group: a timeout kills workers too
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return skipped(f"timed out after {timeout:g} s")
    for line in reversed(out.splitlines()):
        if line.startswith(MARKER):
            try:
                return json.loads(line[len(MARKER):])
            except ValueError:
                break
    if "out of memory" in err.lower():
        return skipped("out of memory")
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = str(-proc.returncode)
        return error(f"probe process crashed ({name})")
    last = next((line for line in reversed(err.splitlines()) if line.strip()), "no output")
    return error(f"probe process exited with status {proc.returncode}: {last[:200]}")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        proc.kill()


if __name__ == "__main__":
    sys.exit(main())
