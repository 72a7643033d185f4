"""`advisor trace` on CPU torch: steps, warnings mapped to user lines, matching, limits, errors.

Exit codes under test: 0 the script ran (N steps, the time limit or its own end), 1 the script
raised (reported, not re-raised), 2 usage errors and interpreters without torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from advisor.runtime.trace import analyse_chrome_trace, parse_command, TraceError

ROOT = Path(__file__).resolve().parents[1]


def _torch_importable() -> bool:
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    return probe.returncode == 0


needs_torch = pytest.mark.skipif(not _torch_importable(), reason="torch is not importable in this interpreter "
                                 "(pip install torch==2.13.0)")

TRAIN = textwrap.dedent("""\
    import torch
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    data = [(torch.randn(4, 8, requires_grad=True), torch.randn(4, 1)) for _ in range(50)]
    for epoch in range(100):
        for x, y in data:
            opt.zero_grad()
            out = checkpoint(model, x)
            loss = torch.nn.functional.mse_loss(out, y)
            loss.backward()
            opt.step()
            print(loss.item())
    raise SystemExit("trace did not stop")
""")


def _advisor(tmp_path: Path, *args: str, python: str = sys.executable):
    return subprocess.run([sys.executable, "-m", "advisor", "trace", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)


@needs_torch
def test_cpu_training_script(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    out = tmp_path / "out"
    proc = _advisor(tmp_path, "--steps", "5", "--out", str(out), "--", sys.executable, "train.py")
    assert proc.returncode == 0, proc.stderr
    assert "this executes your code" in proc.stderr
    text = proc.stdout
    assert "stopped after 5 optimizer steps" in text
    assert "GPU303 at train.py:7 confirmed" in text
    assert "GPU405 at train.py:12 confirmed" in text
    assert "GPU101 at train.py:16: needs CUDA to confirm" in text
    report = json.loads((out / "trace-report.json").read_text())
    assert report["stop"] == "steps" and report["steps"] == 5 and report["cuda"] is False
    deprecations = [w for w in report["warnings"] if w["category"] == "FutureWarning"]
    assert [(Path(w["file"]).name, w["line"]) for w in deprecations] == [("train.py", 7)]
    reentrant = [w for w in report["warnings"] if "use_reentrant" in w["message"]]
    assert reentrant[0]["line"] == 12 and reentrant[0]["count"] == 5
    statuses = {m["code"]: m["status"] for m in report["matches"]}
    assert statuses == {"GPU303": "confirmed", "GPU405": "confirmed", "GPU101": "needs-cuda"}
    assert report["needs_cuda"] and report["profile"]["events"] > 0
    chrome = json.loads((out / "trace.json").read_text())
    assert chrome["traceEvents"]
    assert report["gpu"] == {"cuda": False}


@needs_torch
def test_json_format_keeps_stdout_clean(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    proc = _advisor(tmp_path, "--steps", "3", "--format", "json", "--out", "o", "--", sys.executable, "train.py")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)  # the script's prints went to stderr
    assert report["steps"] == 3


@needs_torch
def test_script_without_optimizer_stops_at_time_limit(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text("import torch\nwhile True:\n    torch.ones(3).sum()\n")
    proc = _advisor(tmp_path, "--time-limit", "2", "--out", "o", "--", sys.executable, "loop.py")
    assert proc.returncode == 0, proc.stderr
    assert "time limit" in proc.stdout
    report = json.loads((tmp_path / "o" / "trace-report.json").read_text())
    assert report["stop"] == "time-limit" and report["steps"] == 0


@needs_torch
def test_script_that_raises_is_reported_with_exit_1(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import torch\n\n\ndef f():\n    raise ValueError('boom')\n\n\nf()\n")
    proc = _advisor(tmp_path, "--out", "o", "--", sys.executable, "bad.py")
    assert proc.returncode == 1
    assert "script error at bad.py:5: ValueError: boom" in proc.stdout
    assert "Traceback" not in proc.stderr  # reported, not re-raised
    report = json.loads((tmp_path / "o" / "trace-report.json").read_text())
    assert report["stop"] == "error" and report["error"]["line"] == 5


def test_interpreter_without_torch(tmp_path: Path) -> None:
    # A sitecustomize that hides torch simulates an interpreter without it.
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import sys\nclass _Block:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('No module named torch (hidden by the test)')\n"
        "sys.meta_path.insert(0, _Block())\n")
    (tmp_path / "t.py").write_text("print('hi')\n")
    env = dict(os.environ, PYTHONPATH=str(shim))
    proc = subprocess.run([sys.executable, "-m", "advisor", "trace", "--out", "o", "--", sys.executable, "t.py"],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 2
    assert "torch is not importable" in proc.stderr


def test_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(TraceError):
        parse_command([])
    with pytest.raises(TraceError):
        parse_command(["python", "-m", "pkg"])
    with pytest.raises(TraceError):
        parse_command(["python", str(tmp_path / "missing.py")])
    script = tmp_path / "s.py"
    script.write_text("")
    cmd = parse_command(["--", "python3", str(script), "--lr", "1"])
    assert cmd.python == "python3" and cmd.args == ["--lr", "1"]
    proc = subprocess.run([sys.executable, "-m", "advisor", "trace"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2 and "give the command to trace" in proc.stderr


def test_chrome_trace_gpu_numbers(tmp_path: Path) -> None:
    """The CUDA-side analysis over a hand-written Kineto trace (no GPU needed)."""
    events = [
        {"ph": "X", "cat": "kernel", "name": "k1", "ts": 0, "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "k2", "ts": 10, "dur": 40},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "ts": 60, "dur": 20,
         "args": {"bytes": 1024}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "ts": 70, "dur": 10},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "ts": 80, "dur": 3},
        {"ph": "X", "cat": "kernel", "name": "k3", "ts": 90, "dur": 10},
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    gpu = analyse_chrome_trace(path)
    assert gpu["kernels"] == 3 and gpu["short_kernels"] == 1
    assert gpu["h2d_copies"]["pageable"] == 1 and gpu["h2d_copies"]["pinned"] == 1
    assert gpu["h2d_copies"]["bytes"] == 1024 and gpu["runtime_syncs"] == 1
    # busy: 0-5, 10-50, 60-80, 90-100 = 75 of 100 us
    assert gpu["gpu_idle_share"] == pytest.approx(0.25)
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1}]}))
    assert analyse_chrome_trace(path) == {"cuda": False}


def test_sync_matching_on_a_cuda_record(tmp_path: Path) -> None:
    """What a CUDA run's record turns into (the record is hand-written: no GPU here)."""
    from advisor.engine import check_file
    from advisor.runtime.trace import match

    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    findings = check_file(script).findings
    path = os.path.realpath(script)
    raw = {"cuda": True, "steps": 51, "sync_armed_after_step": 1,
           "syncs": [{"file": path, "line": 16, "count": 50, "steps": list(range(1, 51))}], "warnings": []}
    texts = {m["code"]: m["text"] for m in match(raw, findings, tmp_path)}
    assert texts["GPU101"] == "GPU101 at train.py:16 confirmed: 50 syncs in 50 steps"
