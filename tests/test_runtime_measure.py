"""`advisor check --measure`: verdicts and figures, JSON, child-process faults, the cache."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli import main

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "examples" / "train.py"
CPU_PROBED = {"GPU501", "GPU503", "GPU301"}


def _cpu_only(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def run_json(capsys, *extra):
    code = main(["check", "--measure", "--format", "json", str(TRAIN), *extra])
    return code, json.loads(capsys.readouterr().out)


def test_measure_json_on_cpu(capsys, monkeypatch):
    _cpu_only(monkeypatch)
    code, items = run_json(capsys)
    assert code == 1  # as `check`
    by_code = {item["code"]: item["measurement"] for item in items}
    assert CPU_PROBED <= set(by_code)
    for c in CPU_PROBED:
        m = by_code[c]
        assert m["verdict"] == "confirmed", m
        assert m["baseline"] is not None and m["unit"]
        assert m["device"] == {"name": "cpu", "torch": m["device"]["torch"], "cuda": None}
        assert set(m) >= {"verdict", "probe", "baseline", "fixed", "unit", "ratio", "saving_per_step",
                          "device", "params"}
    for c in ("GPU101", "GPU102", "GPU103", "GPU105", "GPU201"):
        assert by_code[c]["verdict"] == "skipped: no CUDA device"
    # the site's literal batch size reaches the probe
    assert by_code["GPU301"]["params"]["batch_size"] > 0


def test_measure_text_shows_verdicts_and_table(capsys, monkeypatch):
    _cpu_only(monkeypatch)
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["check", "--measure", str(TRAIN)]) == 1
    out = capsys.readouterr().out
    assert "measured: confirmed (P-EPOCH)" in out
    assert "skipped: no CUDA device" in out
    assert "Measurements" in out and "Saving/step" in out and "device: cpu" in out


def test_without_measure_no_measurement_object(capsys):
    assert main(["check", "--format", "json", str(TRAIN)]) == 1
    assert all("measurement" not in item for item in json.loads(capsys.readouterr().out))


def test_result_cache_is_reused(capsys, monkeypatch):
    _cpu_only(monkeypatch)
    import advisor.runtime.measure as measure

    calls = []
    real = measure.run_in_child

    def counting(code, params, timeout):
        calls.append(code)
        return real(code, params, timeout)

    monkeypatch.setattr(measure, "run_in_child", counting)
    monkeypatch.setattr(measure.measure_findings, "__defaults__", (True, counting))
    _, first = run_json(capsys)
    assert sorted(calls) == sorted(CPU_PROBED)
    calls.clear()
    _, second = run_json(capsys)
    assert calls == []
    for a, b in zip(first, second):
        if a["code"] in CPU_PROBED:
            assert b["measurement"]["cached"] is True
            assert a["measurement"]["baseline"] == b["measurement"]["baseline"]


@pytest.mark.parametrize("fault, verdict", [
    ("hang", "skipped: timed out after 3 s"),
    ("crash", "error: probe process crashed (SIGABRT)"),
    ("raise", "error: RuntimeError: injected probe failure"),
    ("oom", "skipped: out of memory"),
])
def test_faulty_probe_is_reported_and_the_run_goes_on(capsys, monkeypatch, fault, verdict):
    """Only the hanging probe gets a short timeout: it never answers, so it times out however
    fast the machine is. Every other probe gets a timeout no loaded machine reaches (a 3 s
    timeout for all of them failed when torch's import alone took longer)."""
    _cpu_only(monkeypatch)
    import advisor.runtime.measure as measure

    monkeypatch.setenv("ADVISOR_PROBE_FAULT", f"GPU501:{fault}")
    monkeypatch.setenv("ADVISOR_PROBE_TIMEOUT", "3600")
    real = measure.run_in_child

    def short_for_the_faulty_probe(code, params, timeout):
        return real(code, params, 3 if (code, fault) == ("GPU501", "hang") else timeout)

    monkeypatch.setattr(measure.measure_findings, "__defaults__", (True, short_for_the_faulty_probe))
    code, items = run_json(capsys, "--no-cache")
    assert code == 1
    by_code = {item["code"]: item["measurement"] for item in items}
    assert by_code["GPU501"]["verdict"] == verdict
    assert by_code["GPU503"]["verdict"] == "confirmed"


def test_child_module_prints_json():
    proc = subprocess.run([sys.executable, "-m", "advisor.runtime.child", "GPU406", '{"accum_steps": 3}'],
                          capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert proc.returncode == 0
    result = json.loads(proc.stdout.strip().splitlines()[-1].split(" ", 1)[1])
    assert result["verdict"] == "confirmed" and result["ratio"] == pytest.approx(3, rel=1e-3)


def test_measure_without_torch_exits_2(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n")
    env = dict(os.environ, PYTHONPATH=str(shim))
    proc = subprocess.run([sys.executable, "-c", "import sys\nfrom advisor.cli import main\n"
                           f"sys.exit(main(['check', '--measure', {str(TRAIN)!r}]))"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=str(ROOT))
    assert proc.returncode == 2, proc.stderr
    assert "advisor: error: --measure needs torch: pip install 'torch-advisor[measure]'" in proc.stderr
    assert proc.stdout == ""

