"""Configuration values that used to end in a traceback or in silence: each is one line with
exit code 2 now, and a pyproject.toml that starts with a byte order mark is read."""

from __future__ import annotations

import pytest

from advisor.cli import main
from tests.snippets import HOT


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("body, message", [
    ('torch-version = "2.' + "9" * 5000 + '"', 'is not a torch version such as "2.4"'),
    ("torch-version = " + "9" * 5000, "invalid TOML: Exceeds the limit (4300 digits)"),
    ("select = " + "[" * 5000 + "]" * 5000, "invalid TOML: arrays or tables nested too deeply"),
    ("x = " + "{a = " * 5000 + "1" + "}" * 5000, "invalid TOML: arrays or tables nested too deeply"),
    ("select = []", "`select` is empty, so the selection enables no rule"),
    ("analysis-budget = 0", "`analysis-budget`: 0 is not a number of seconds"),
    ("analysis-budget = nan", "`analysis-budget`: nan is not a number of seconds"),
    ("analysis-budget = inf", "`analysis-budget`: inf is not a number of seconds"),
    ("analysis-budget = true", "`analysis-budget`: True is not a number of seconds"),
    ('analysis-budget = "60"', "`analysis-budget`: '60' is not a number of seconds"),
    ("analysis-budget = " + "9" * 100, "`analysis-budget`: a number of 30 digits or more is not"),
    ("max-file-size = 1.5", "`max-file-size`: 1.5 is not a number of bytes"),
    ("max-file-size = -1", "`max-file-size`: -1 is not a number of bytes"),
], ids=["version-string", "version-integer", "nested-arrays", "nested-tables", "empty-select", "budget-zero",
        "budget-nan", "budget-inf", "budget-bool", "budget-string", "budget-huge", "size-float", "size-negative"])
def test_bad_values_are_one_line_with_exit_2(tmp_path, capsys, body, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.advisor]\n{body}\n")
    (tmp_path / "t.py").write_text(HOT)
    code, out, err = run(capsys, "check", tmp_path)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and len(err) < 400


@pytest.mark.parametrize("args, message", [
    (["--select", ""], "--select '' enables no rule"),
    (["--select", ", ,"], "--select ', ,' enables no rule"),
    (["--analysis-budget", "soon"], "--analysis-budget: 'soon' is not a number of seconds"),
    (["--analysis-budget", "-1"], "--analysis-budget: -1.0 is not a number of seconds"),
    (["--max-file-size", "1e6"], "--max-file-size: '1e6' is not a number of bytes"),
    (["--torch-version", "2." + "9" * 5000], 'is not a torch version such as "2.4"'),
])
def test_bad_options_are_one_line_with_exit_2(tmp_path, capsys, args, message):
    (tmp_path / "t.py").write_text(HOT)
    code, out, err = run(capsys, "check", *args, tmp_path)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_a_byte_order_mark_is_read_past(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_bytes("\ufeff[tool.advisor]\nignore = [\"GPU101\"]\n".encode("utf-8"))
    (tmp_path / "t.py").write_text(HOT)
    code, out, err = run(capsys, "check", "--no-cache", "--format", "concise", tmp_path)
    assert (code, out, err) == (0, "", "")
    (tmp_path / "pyproject.toml").write_text("[tool.advisor]\n")
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", tmp_path)
    assert code == 1 and ":7:14: GPU101" in out  # the ignore above was what silenced it


def test_the_limits_from_pyproject_reach_the_run(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.advisor]\nmax-file-size = 10\nanalysis-budget = 30\n")
    (tmp_path / "t.py").write_text(HOT)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", tmp_path)
    assert code == 1 and "more than the 10 bytes allowed (max-file-size)" in out
    # The command line wins over the file.
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", "--max-file-size", "100000", tmp_path)
    assert code == 1 and ":7:14: GPU101" in out
