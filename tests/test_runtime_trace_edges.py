"""`advisor trace` against scripts that fight it: threads that keep the process alive, alarms
caught or replaced, forks that leave the session, a script that deletes advisor's output
folder, exit statuses, and what a CPU-only run can and cannot confirm.

Every test runs `advisor trace` in a subprocess, as a user does. None measures time: each
hostile script would run forever (or for 1000 s) if advisor did not stop it, so a broken
limit fails on the subprocess timeout or on the report, never on a clock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_runtime_trace import needs_torch

HANG_GUARD_S = 600  # only reached when advisor fails to stop the script at all


def _trace(tmp_path: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", "trace", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=HANG_GUARD_S, env=env, stdin=subprocess.DEVNULL)


def _script(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(textwrap.dedent(text))
    return name


def _report(tmp_path: Path, out: str = "o") -> dict:
    return json.loads((tmp_path / out / "trace-report.json").read_text())


def _alive(pid: int) -> bool:
    """Running (a zombie has ended; only its parent has not collected it yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] != b"Z"


@needs_torch
def test_non_daemon_thread_does_not_keep_the_trace_waiting(tmp_path: Path) -> None:
    name = _script(tmp_path, "threaded.py", """\
        import threading
        import time
        import torch

        def heartbeat():
            while True:
                time.sleep(0.05)

        threading.Thread(target=heartbeat).start()  # not a daemon: the interpreter waits for it
        while True:
            torch.ones(3).sum()
    """)
    proc = _trace(tmp_path, "--time-limit", "1", "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 0, proc.stderr
    assert "stopped at the 1 s time limit" in proc.stdout
    assert "did not exit within 5 s of the end of the trace" in proc.stdout
    assert _report(tmp_path)["stop"] == "time-limit"


@pytest.mark.parametrize("body", [
    # catches advisor's stop and carries on
    """\
    while True:
        try:
            while True:
                torch.ones(3).sum()
        except BaseException:
            pass
    """,
    # replaces advisor's SIGALRM handler with its own
    """\
    signal.signal(signal.SIGALRM, lambda signum, frame: None)
    while True:
        torch.ones(3).sum()
    """,
], ids=["catches-the-stop", "replaces-the-alarm"])
@needs_torch
def test_script_that_blocks_the_stop_is_ended_with_a_report(tmp_path: Path, body: str) -> None:
    name = _script(tmp_path, "stubborn.py", "import signal\nimport torch\n\n" + textwrap.dedent(body))
    proc = _trace(tmp_path, "--time-limit", "1", "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 0, proc.stderr
    assert "did not stop at the 1 s time limit" in proc.stdout
    report = _report(tmp_path)
    assert report["stop"] == "time-limit" and report["script"].endswith("stubborn.py")


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX signals")
@needs_torch
def test_frozen_script_is_killed_after_the_grace(tmp_path: Path) -> None:
    """A process that cannot even run advisor's watchdog (stopped with SIGSTOP, as a debugger or
    a job-control mishap would) is killed by the parent, and the message says so."""
    name = _script(tmp_path, "frozen.py",
                   "import os\nimport signal\nimport torch\n\nos.kill(os.getpid(), signal.SIGSTOP)\n")
    proc = _trace(tmp_path, "--time-limit", "1", "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 2
    assert "did not stop at the 1 s time limit, nor 5 s later" in proc.stderr
    assert not (tmp_path / "o" / "trace-report.json").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finding escaped processes needs Linux")
@needs_torch
def test_forked_and_escaped_children_are_gone_when_trace_returns(tmp_path: Path) -> None:
    name = _script(tmp_path, "forks.py", f"""\
        import os
        import time
        import torch

        here = {str(tmp_path)!r}
        if os.fork() == 0:
            if os.fork() == 0:
                os.setsid()  # leaves the traced session and process group
                open(os.path.join(here, "escaped.pid"), "w").write(str(os.getpid()))
                time.sleep(1000)
                os._exit(0)
            open(os.path.join(here, "forked.pid"), "w").write(str(os.getpid()))
            time.sleep(1000)
            os._exit(0)
        while not all(os.path.exists(os.path.join(here, f)) for f in ("forked.pid", "escaped.pid")):
            time.sleep(0.01)
        print("main script done")
    """)
    proc = _trace(tmp_path, "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 0, proc.stderr
    assert "main script done" in proc.stdout
    assert "the script left 2 processes running; advisor ended them" in proc.stdout
    for pid_file in ("forked.pid", "escaped.pid"):
        pid = int((tmp_path / pid_file).read_text())
        assert not _alive(pid), f"{pid_file}: process {pid} still runs after the trace returned"


@needs_torch
def test_script_that_deletes_the_output_folder_still_gets_its_report(tmp_path: Path) -> None:
    name = _script(tmp_path, "vandal.py", f"""\
        import os
        import shutil
        import torch

        os.chdir("/")
        shutil.rmtree({str(tmp_path / "o")!r})
        model = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(100):
            model(torch.randn(3, 2)).sum().backward()
            opt.step()
            opt.zero_grad()
    """)
    (tmp_path / "o").mkdir()
    proc = _trace(tmp_path, "--steps", "5", "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 0, proc.stderr
    assert "stopped after 5 optimizer steps" in proc.stdout
    report = _report(tmp_path)
    assert report["stop"] == "steps" and report["steps"] == 5
    assert (tmp_path / "o" / "trace.json").is_file()


@needs_torch
def test_exit_status_3_is_reported_as_such(tmp_path: Path) -> None:
    name = _script(tmp_path, "three.py", "import sys\nimport torch\n\nsys.exit(3)\n")
    proc = _trace(tmp_path, "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 1, proc.stderr
    assert "the script exited with status 3 after 0 optimizer steps" in proc.stdout
    assert "torch is not importable" not in proc.stdout + proc.stderr
    assert _report(tmp_path)["exit_status"] == 3


@needs_torch
def test_hard_exit_status_3_is_reported_as_such(tmp_path: Path) -> None:
    name = _script(tmp_path, "hard.py", "import os\nimport torch\n\nos._exit(3)\n")
    proc = _trace(tmp_path, "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 2
    assert "ended the interpreter with exit status 3 before advisor could report" in proc.stderr
    assert "torch is not importable" not in proc.stderr


@needs_torch
def test_cuda_only_rules_say_needs_cuda_on_a_cpu_machine(tmp_path: Path) -> None:
    name = _script(tmp_path, "loader.py", """\
        import torch
        from torch.utils.data import DataLoader

        device = "cuda" if torch.cuda.is_available() else "cpu"
        model = torch.nn.Linear(4, 1).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(torch.randn(64, 4), batch_size=8)
        for epoch in range(10):
            for batch in loader:
                loss = model(batch.to(device)).sum()
                loss.backward()
                opt.step()
                opt.zero_grad()
    """)
    proc = _trace(tmp_path, "--steps", "3", "--out", "o", "--", sys.executable, name)
    assert proc.returncode == 0, proc.stderr
    if _report(tmp_path)["cuda"]:
        pytest.skip("this machine has CUDA: the rules can be observed")
    assert "GPU201 at loader.py:7: needs CUDA to confirm" in proc.stdout
    assert "GPU202 at loader.py:7: needs CUDA to confirm" in proc.stdout
    assert "Not observed" not in proc.stdout
    statuses = {m["code"]: m["status"] for m in _report(tmp_path)["matches"]}
    assert statuses["GPU201"] == statuses["GPU202"] == "needs-cuda"


def _without_numpy(tmp_path: Path) -> dict:
    """An environment in which `import numpy` fails, as after `pip install torch` alone."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import sys\nclass _NoNumpy:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy' or name.startswith('numpy.'):\n"
        "            raise ModuleNotFoundError('No module named numpy (hidden by the test)', name=name)\n"
        "sys.meta_path.insert(0, _NoNumpy())\n")
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=str(shim) + (os.pathsep + path if path else ""))


@needs_torch
def test_trace_does_not_print_torchs_numpy_warning(tmp_path: Path) -> None:
    name = _script(tmp_path, "plain.py", "import torch\n\nprint(torch.ones(2).sum().item())\n")
    proc = _trace(tmp_path, "--out", "o", "--", sys.executable, name, env=_without_numpy(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "the script finished" in proc.stdout
    assert "NumPy" not in proc.stderr


@needs_torch
def test_probe_process_does_not_print_torchs_numpy_warning(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    env = _without_numpy(tmp_path)
    env["PYTHONPATH"] += os.pathsep + str(root)  # the checkout under test, as `advisor` puts it
    proc = subprocess.run([sys.executable, "-m", "advisor.runtime.child", "GPU406", '{"accum_steps": 2}'],
                          capture_output=True, text=True, timeout=HANG_GUARD_S, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "confirmed" in proc.stdout
    assert "NumPy" not in proc.stderr
