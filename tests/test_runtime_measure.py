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


@pytest.fixture(autouse=True)
def _patient_probes(monkeypatch):
    """Healthy probes get a timeout no loaded machine reaches (torch's import alone can take
    tens of seconds there); the tests that want a timeout set their own."""
    monkeypatch.setenv("ADVISOR_PROBE_TIMEOUT", "3600")


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
    by_code = {item["code"]: item["measurement"] for item in items if "measurement" in item}  # rules with a probe
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
    real = measure.run_in_child

    def short_for_the_faulty_probe(code, params, timeout):
        return real(code, params, 3 if (code, fault) == ("GPU501", "hang") else timeout)

    monkeypatch.setattr(measure.measure_findings, "__defaults__", (True, short_for_the_faulty_probe))
    code, items = run_json(capsys, "--no-cache")
    assert code == 1
    by_code = {item["code"]: item["measurement"] for item in items if "measurement" in item}  # rules with a probe
    assert by_code["GPU501"]["verdict"] == verdict
    assert by_code["GPU503"]["verdict"] == "confirmed"


def test_child_module_prints_json():
    proc = subprocess.run([sys.executable, "-m", "advisor.runtime.child", "GPU406", '{"accum_steps": 3}'],
                          capture_output=True, text=True, timeout=600, cwd=str(ROOT))
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
                          capture_output=True, text=True, timeout=600, env=env, cwd=str(ROOT))
    assert proc.returncode == 2, proc.stderr
    assert "advisor: error: --measure needs torch: pip install 'torch-advisor[measure]'" in proc.stderr
    assert proc.stdout == ""


ODD_VALUES = ("...", "b'x'", "1j", "{1, 2}", "{[]: 1}", "-True", "1e999", "9" * 30)


def _odd_loaders(tmp_path: Path) -> Path:
    """One GPU205 finding (shuffle with a sampler: DataLoader raises) per odd keyword value."""
    lines = ["import torch", "from torch.utils.data import DataLoader", "",
             "ds = list(range(10))", "sampler = torch.utils.data.RandomSampler(ds)"]
    lines += [f"loader{i} = DataLoader(ds, batch_size=4, shuffle=True, sampler=sampler, num_workers={value})"
              for i, value in enumerate(ODD_VALUES)]
    path = tmp_path / "odd.py"
    path.write_text("\n".join(lines) + "\n")
    return path


def _measure_cli(path: Path, *extra: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", "check", "--measure", "--format", "json", *extra,
                           str(path)], capture_output=True, text=True, timeout=600, cwd=str(path.parent), env=env)


def test_odd_keyword_values_are_unknown_to_the_probe(tmp_path):
    proc = _measure_cli(_odd_loaders(tmp_path), "--no-cache")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    items = json.loads(proc.stdout)
    measured = [item["measurement"] for item in items if item["code"] == "GPU205"]
    assert len(measured) == len(ODD_VALUES)
    for m in measured:
        assert m["verdict"] == "confirmed"
        assert m["params"]["kwargs"] == {"batch_size": 4, "shuffle": True, "sampler": True}


def test_site_keeps_plain_literals_only():
    import ast

    from advisor.runtime.site import _literal_kwargs

    call = ast.parse("DataLoader(ds, batch_size=-8, shuffle=False, num_workers=2.5, prefetch_factor=None, "
                     "pin_memory='yes', drop_last=..., persistent_workers=b'1')").body[0].value
    assert _literal_kwargs(call) == {"batch_size": -8, "shuffle": False, "num_workers": 2.5,
                                     "prefetch_factor": None, "pin_memory": "yes"}


SPOILERS = {
    "wrong types": lambda p: p.write_text('{"verdict": "confirmed", "baseline": "many", "unit": 3}'),
    "odd verdict": lambda p: p.write_text('{"verdict": 1}'),
    "deep nesting": lambda p: p.write_text("[" * 100000 + "]" * 100000),
    "infinite figure": lambda p: p.write_text('{"verdict": "confirmed", "baseline": 1e999, "fixed": 1}'),
    "fifo": lambda p: (p.unlink(), os.mkfifo(p)),
    "link to /dev/zero": lambda p: (p.unlink(), p.symlink_to("/dev/zero")),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and /dev/zero")
@pytest.mark.parametrize("spoiler", list(SPOILERS))
def test_corrupt_cache_entry_is_a_miss(tmp_path, spoiler):
    from advisor.runtime.results import MeasureCache

    cache = MeasureCache(tmp_path)
    cache.put("k", {"verdict": "confirmed", "baseline": 1.0, "fixed": 0.5, "unit": "ms", "ratio": 2.0,
                    "saving_per_step": None, "detail": ""})
    assert cache.get("k")["baseline"] == 1.0
    SPOILERS[spoiler](tmp_path / "measure" / "k.json")
    assert cache.get("k") is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_corrupt_cached_measurements_are_measured_again(tmp_path):
    """Two cached measurements (one per batch size), one spoiled with the wrong types and one
    replaced by a FIFO: the next run measures both again, without a traceback or a hang."""
    lines = ["import torch", "from torch.utils.data import DataLoader", "", "ds = list(range(10))",
             "sampler = torch.utils.data.RandomSampler(ds)"]
    lines += [f"loader{size} = DataLoader(ds, batch_size={size}, shuffle=True, sampler=sampler)" for size in (1, 2)]
    script = tmp_path / "two.py"
    script.write_text("\n".join(lines) + "\n")
    first = _measure_cli(script)
    assert first.returncode == 1, first.stderr
    entries = sorted((Path(os.environ["ADVISOR_CACHE_DIR"]) / "measure").glob("*.json"))
    assert len(entries) == 2
    SPOILERS["wrong types"](entries[0])
    SPOILERS["fifo"](entries[1])
    second = _measure_cli(script)
    assert second.returncode == 1, second.stderr
    assert "Traceback" not in second.stderr
    measured = [i["measurement"] for i in json.loads(second.stdout) if i["code"] == "GPU205"]
    assert len(measured) == 2
    assert all(m["verdict"] == "confirmed" and m["cached"] is False for m in measured)
