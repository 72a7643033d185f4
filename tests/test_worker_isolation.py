"""A worker process that dies costs the one file it was on; a file that could crash the parser
is analysed in a process of its own even with --jobs 1; the analysis budget stops a file and
the run goes on, and what the budget stopped is never cached."""

from __future__ import annotations

import faulthandler
import os
import signal

import pytest

import advisor.cache as cache_module
import advisor.engine as engine
import advisor.runner as runner
from advisor.cli import main
from tests.snippets import HOT

GOOD_FILES = 21


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def entries(cache_dir):
    folder = cache_dir / f"v{cache_module.FORMAT}"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def die() -> None:
    faulthandler.disable()  # pytest's handler would print the dying worker's stack
    os.kill(os.getpid(), signal.SIGSEGV)


@pytest.fixture
def folder(tmp_path):
    for number in range(GOOD_FILES):
        (tmp_path / f"good_{number:02d}.py").write_text(HOT)
    return tmp_path


def good_lines(out: str):
    return [line for line in out.splitlines() if "good_" in line and ":7:14: GPU101" in line]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the workers inherit the patched analysis through fork")
def test_a_worker_that_dies_costs_one_file(folder, capsys, monkeypatch):
    (folder / "crash.py").write_text(HOT)
    real = runner._check_bytes

    def check(data, job, unless_risky=False):
        if job.display.endswith("crash.py"):
            die()
        return real(data, job, unless_risky)

    monkeypatch.setattr(runner, "_check_bytes", check)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "concise", "--jobs", "2", folder)
    assert code == 2
    assert err.splitlines() == [
        f"advisor: error: {folder / 'crash.py'}: internal error (the worker process was killed by SIGSEGV); "
        "please report it"]
    assert len(good_lines(out)) == GOOD_FILES


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the child inherits the patched analysis through fork")
def test_with_one_job_a_risky_file_is_analysed_in_a_child(folder, capsys, monkeypatch):
    # 600 chained terms: within the parser's limits, but risky enough to keep out of the run's
    # own process. The patch makes its analysis crash as an unforeseen shape would.
    (folder / "risky.py").write_text(HOT + "z = " + "a + " * 600 + "a\n")
    real = runner._check_bytes

    def check(data, job, unless_risky=False):
        if job.display.endswith("risky.py") and not unless_risky:
            die()
        return real(data, job, unless_risky)

    monkeypatch.setattr(runner, "_check_bytes", check)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "concise", "--jobs", "1", folder)
    assert code == 2
    assert err.splitlines() == [
        f"advisor: error: {folder / 'risky.py'}: internal error (the worker process was killed by SIGSEGV); "
        "please report it"]
    assert len(good_lines(out)) == GOOD_FILES


@pytest.mark.skipif(not hasattr(signal, "SIGXCPU"), reason="no CPU-time limit on this platform")
def test_native_code_past_the_budget_is_ended_by_the_cpu_limit(folder, capsys, monkeypatch):
    # A regular expression that backtracks for ever runs in C: nothing raised into its thread
    # takes effect. The operating system's CPU limit on the worker ends it instead.
    (folder / "stall.py").write_text(HOT)
    real = runner._check_bytes

    def check(data, job, unless_risky=False):
        if job.display.endswith("stall.py"):
            import re

            re.match(r"(a+)+$", "a" * 64 + "!")
        return real(data, job, unless_risky)

    monkeypatch.setattr(runner, "_check_bytes", check)
    monkeypatch.setattr(runner, "CPU_GRACE_SECONDS", 0)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "concise", "--jobs", "2",
                         "--analysis-budget", "1", folder)
    assert code == 1, err
    assert f"{folder / 'stall.py'}:1:1: error: skipped: the analysis used up its budget of 1 s" in out
    assert len(good_lines(out)) == GOOD_FILES


class _EndlessModel:
    """FileModel.build that never returns (pure Python: the budget stops it from outside)."""

    @classmethod
    def build(cls, *args, **kwargs):
        while True:
            pass


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_endless_analysis_is_stopped_by_the_budget(folder, capsys, monkeypatch, jobs):
    monkeypatch.setattr(engine, "FileModel", _EndlessModel)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "concise", "--jobs", jobs,
                         "--analysis-budget", "0.2", folder / "good_00.py", folder / "good_01.py")
    assert code == 1 and err == ""
    assert out.splitlines() == [
        f"{folder / name}:1:1: error: skipped: the analysis used up its budget of 0.2 s of CPU time (analysis-budget)"
        for name in ("good_00.py", "good_01.py")]


def test_a_budget_no_machine_meets_is_reported_and_never_cached(folder, capsys, cache_dir):
    code, out, _ = run(capsys, "check", "--format", "concise", "--analysis-budget", "1e-9", folder)
    assert code == 1
    assert len(out.splitlines()) == GOOD_FILES
    assert all("skipped: the analysis used up its budget of 1e-09 s" in line for line in out.splitlines())
    assert entries(cache_dir) == []
    # The next run, with a budget every machine meets, analyses every file afresh: neither the
    # result cache nor the stat index answers for them.
    code, out, _ = run(capsys, "check", "--format", "concise", "--analysis-budget", "86400", folder)
    assert code == 1 and len(good_lines(out)) == GOOD_FILES
    assert len(entries(cache_dir)) == GOOD_FILES


def test_the_budget_comes_from_pyproject_too(folder, capsys):
    (folder / "pyproject.toml").write_text("[tool.advisor]\nanalysis-budget = 1e-9\n")
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", folder / "good_00.py")
    assert code == 1 and "used up its budget of 1e-09 s" in out
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", "--analysis-budget", "86400",
                       folder / "good_00.py")
    assert code == 1 and ":7:14: GPU101" in out


def test_files_over_the_size_limit_are_refused(tmp_path, capsys, cache_dir):
    small = tmp_path / "small.py"
    small.write_text(HOT)
    big = tmp_path / "big.py"
    big.write_text(HOT + "# padding\n" * 100)
    code, out, _ = run(capsys, "check", "--format", "concise", "--max-file-size", "1_000", tmp_path)
    assert code == 1
    size = big.stat().st_size
    lines = out.splitlines()
    assert lines[0] == f"{big}:1:1: error: skipped: {size:,} bytes, more than the 1,000 bytes allowed (max-file-size)"
    assert lines[1].startswith(f"{small}:7:14: GPU101") and len(lines) == 2
    assert len(entries(cache_dir)) == 1  # the refusal is not cached: a higher limit checks the file


def test_a_huge_sparse_file_is_refused_without_being_read(tmp_path, capsys, monkeypatch):
    huge = tmp_path / "huge.py"
    with open(huge, "wb") as handle:
        handle.truncate(64 * 1024 ** 3)  # 64 GB of nothing: reading it would take minutes and all memory
    reads = []
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or b"")
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", huge)
    assert code == 1
    assert out == f"{huge}:1:1: error: skipped: 68,719,476,736 bytes, more than the 5,000,000 bytes allowed " \
                  "(max-file-size)\n"
    assert reads == []
