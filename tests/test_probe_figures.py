"""Probe figures on the rule pages: recorded by running the probes
(`python -m advisor.runtime.figures record`), committed in advisor/runtime/figures.json, and
shown with device and torch version wherever a rule's docs are rendered."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from advisor.rule_docs import measured_section, rule_markdown, rule_page
from advisor.rules import ALL_RULES, get_rule
from advisor.runtime import device, figures
from advisor.runtime.registry import PROBES

ROOT = Path(__file__).resolve().parent.parent
CPU_PROBES = sorted(code for code, p in PROBES.items() if not p.needs_cuda)
CUDA_PROBES = sorted(code for code, p in PROBES.items() if p.needs_cuda)


def test_every_cpu_probe_has_recorded_figures_on_its_page():
    recorded = figures.load_figures()
    assert CPU_PROBES and set(CPU_PROBES) <= set(recorded)
    for code in CPU_PROBES:
        entry = recorded[code]
        assert entry["verdict"] in ("confirmed", "not confirmed")
        assert entry["device"]["name"].startswith("cpu") and entry["device"]["torch"]
        page = rule_page(get_rule(code))
        assert f"Recorded on {entry['device']['name']}, torch {entry['device']['torch']}" in page
        assert f"**{entry['verdict']}**" in page


def test_cuda_probes_say_plainly_they_are_not_measured_yet():
    recorded = figures.load_figures()
    for code in CUDA_PROBES:
        text = rule_markdown(get_rule(code))
        if code in recorded:
            assert "Recorded on" in text and "CUDA" in text
        else:
            assert "needs a CUDA device, and its figure has not been measured yet" in text


def test_pages_without_a_probe_say_so_and_none_says_not_yet_measured():
    for rule in ALL_RULES:
        page = rule_page(rule)
        assert "not yet measured" not in page
        if rule.code not in PROBES:
            assert "No probe measures this rule yet." in page
        else:
            assert f"Probe `{PROBES[rule.code].probe}`" in page


def test_a_recorded_cuda_figure_shows_device_torch_and_cuda():
    fake = {"GPU101": {"probe": "P-SYNC", "verdict": "confirmed", "baseline": 2.5, "fixed": 1.0, "unit": "ms/step",
                       "ratio": 2.5, "saving_per_step": 1.5, "detail": "", "params": {"numel": 1024},
                       "device": {"name": "NVIDIA H100", "torch": "2.13.0+cu128", "cuda": "12.8"},
                       "recorded": "2026-12-01"}}
    text = "\n".join(measured_section(get_rule("GPU101"), fake))
    assert "| 2.5 | 1 | ms/step |" in text
    assert "Recorded on NVIDIA H100, torch 2.13.0+cu128, CUDA 12.8, on 2026-12-01" in text
    assert "saves 1.5 ms per step" in text


def _runner(calls):
    def run(code, params, timeout):
        calls.append(code)
        if code == "GPU205":
            return {"verdict": "error: boom"}
        return {"verdict": "confirmed", "baseline": 2.0, "fixed": 1.0, "unit": "u", "ratio": 2.0,
                "saving_per_step": None, "detail": "d"}
    return run


def test_record_runs_what_this_machine_can_and_keeps_the_rest(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    path = tmp_path / "figures.json"
    kept = {"probe": "P-SYNC", "verdict": "confirmed", "baseline": 9.0, "fixed": 1.0, "unit": "ms/step",
            "device": {"name": "a GPU", "torch": "x", "cuda": "12"}}
    path.write_text(json.dumps({"format": figures.FORMAT, "figures": {"GPU101": kept}}))
    monkeypatch.setattr(device, "device_facts", lambda: {"name": "cpu", "torch": "2.13.0+cpu", "cuda": None})
    calls, out = [], io.StringIO()
    status = figures.record([], path=path, runner=_runner(calls), today="2026-12-01", out=out)
    assert status == 1  # GPU205's probe failed: reported, not recorded
    assert set(calls) == set(CPU_PROBES)  # no CUDA here: the CUDA probes did not run
    written = figures.load_figures(path)
    assert written["GPU101"] == kept  # a figure from elsewhere survives
    assert "GPU205" not in written and "GPU205: error: boom; not recorded" in out.getvalue()
    assert written["GPU501"]["device"]["name"].startswith("cpu") and written["GPU501"]["recorded"] == "2026-12-01"
    assert "apply_fix" not in written["GPU501"]["params"]
    assert "GPU101: skipped, P-SYNC needs a CUDA device" in out.getvalue()


def test_record_only_cuda_names_the_gpu(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    path = tmp_path / "figures.json"
    monkeypatch.setattr(device, "device_facts", lambda: {"name": "NVIDIA H100", "torch": "2.13.0", "cuda": "12.8"})
    calls = []
    assert figures.record([], only="cuda", path=path, runner=_runner(calls), out=io.StringIO()) == 0
    assert set(calls) == set(CUDA_PROBES)
    assert figures.load_figures(path)["GPU101"]["device"] == {"name": "NVIDIA H100", "torch": "2.13.0", "cuda": "12.8"}


@pytest.mark.parametrize("body", ["", "not json", "[]", '{"format": 99, "figures": {}}',
                                  '{"format": 1, "figures": {"GPU101": {"verdict": "error: x"}}}'])
def test_a_broken_figures_file_reads_as_no_figures(tmp_path, body):
    path = tmp_path / "figures.json"
    path.write_text(body)
    assert figures.load_figures(path) == {}


def test_gpu_check_records_the_cuda_figures():
    script = (ROOT / "scripts" / "gpu-check").read_text()
    assert "advisor.runtime.figures record --only cuda" in script
