"""Files nested deeper than libcst's native parser survives (it dies with SIGSEGV, taking the
process with it): each is one line, and every other file of the run is still reported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from advisor.config import Config
from advisor.engine import check_source
from advisor.guards import MAX_PARSER_DEPTH, looks_risky, nesting_problem
from tests.snippets import HOT

# The shapes of the report, each about 10,000 levels deep (7,000 attributes). Before the screen
# every one of them killed `advisor check` with SIGSEGV or ran for minutes.
SHAPES = {
    "plus": "z = a + \\\n" + "a + \\\n" * 10_000 + "a\n",
    "and": "z = a and \\\n" + "a and \\\n" * 10_000 + "a\n",
    "not": "z = \\\n" + "not \\\n" * 10_000 + "a\n",
    "minus": "z = \\\n" + "- \\\n" * 10_000 + "a\n",
    "power": "z = \\\n" + "a ** \\\n" * 10_000 + "a\n",
    "lambda": "z = \\\n" + "lambda: \\\n" * 10_000 + "a\n",
    "ifexp": "z = \\\n" + "a if b else \\\n" * 10_000 + "a\n",
    "attributes": "z = a\\\n" + ".b\\\n" * 7_000 + ".c\n",
    "elif": "if a:\n    pass\n" + "elif a:\n    pass\n" * 10_000,
    "minus-one-line": "z = " + "-" * 10_000 + "a\n",
    "calls-in-brackets": "z = (a\n" + "()\n" * 10_000 + ")\n",
}
GOOD_FILES = 21


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    for name, tail in SHAPES.items():
        (folder / f"deep_{name}.py").write_text(HOT + tail)
    for number in range(GOOD_FILES):
        (folder / f"good_{number:02d}.py").write_text(HOT)
    return folder


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_shape_is_one_line_and_its_neighbours_are_reported(hostile_folder, jobs):
    out = subprocess.run([sys.executable, "-m", "advisor", "check", "--no-cache", "--format", "concise",
                          "--jobs", jobs, str(hostile_folder)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 1, out.stderr
    assert out.stderr == ""
    lines = out.stdout.splitlines()
    for name in SHAPES:
        mine = [line for line in lines if f"deep_{name}.py:" in line]
        assert len(mine) == 1, (name, mine)
        assert "error: skipped: too deeply nested to analyse" in mine[0]
    good = [line for line in lines if "good_" in line]
    assert len(good) == GOOD_FILES and all(":7:14: GPU101" in line for line in good)
    assert len(lines) == len(SHAPES) + GOOD_FILES


@pytest.mark.parametrize("shape", ["and", "elif"])
def test_the_limit_names_the_statement(shape):
    body = "".join(f"    {line}\n" for line in ("z = " + "a and " * 1_100 + "a" if shape == "and" else
                                                  "if a:\n    pass\n" + "elif a:\n    pass\n" * 1_100).splitlines())
    reason, row, _ = nesting_problem("x = 1\ndef f():\n    y = 1\n" + body)
    assert row == 4  # the statement, or the first `if` of the chain: not a line deep inside it
    assert f"more than {MAX_PARSER_DEPTH:,} levels at line 4" in reason


@pytest.mark.parametrize("tail", [
    "z = " + "a + " * 900 + "a\n",
    "z = " + "not " * 900 + "a\n",
    "if a:\n    pass\n" + "elif a:\n    pass\n" * 900,
], ids=["plus", "not", "elif"])
def test_deep_but_within_the_limit_is_analysed(tail):
    text = HOT + tail
    assert looks_risky(text)  # measured, then let through
    assert nesting_problem(text) is None
    result = check_source(text, "deep.py", Config())
    assert result.problem is None and [f.code for f in result.findings] == ["GPU101"]


def test_long_flat_statements_are_not_measured():
    # Thousands of elements, no depth: a data table or a long call stays on the fast path.
    table = "TABLE = [\n" + "".join(f"    ('name{i}', {i}, 'value'),\n" for i in range(5_000)) + "]\n"
    assert nesting_problem(HOT + table) is None
    assert not looks_risky("x = 1\n" * 1000)


def test_flake8_plugin_survives_the_shapes(tmp_path):
    pytest.importorskip("flake8")
    # Shapes that flake8 itself survives (it parses every file with CPython's parser, and runs
    # pyflakes, which recurses; both give up on the other shapes before any plugin runs), but
    # libcst would crash on: CPython's tree keeps and/or chains flat, libcst's does not.
    shapes = {"and": SHAPES["and"], "or": "z = " + "a or " * 10_000 + "a\n"}
    for name, tail in shapes.items():
        (tmp_path / f"deep_{name}.py").write_text(HOT + tail)
    (tmp_path / "good.py").write_text(HOT)
    out = subprocess.run([sys.executable, "-m", "flake8", "--select", "GPU", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert [line.split(" ")[0] for line in out.stdout.splitlines()] == [f"{tmp_path / 'good.py'}:7:14:"]
    for name in shapes:
        assert f"deep_{name}.py: skipped: too deeply nested" in out.stderr


def test_notebook_cells_are_screened_too(tmp_path):
    import json

    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": HOT + SHAPES["lambda"]}]
    notebook = tmp_path / "deep.ipynb"
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    out = subprocess.run([sys.executable, "-m", "advisor", "check", "--no-cache", "--format", "concise",
                          str(notebook)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 1, out.stderr
    assert "too deeply nested" in out.stdout and len(out.stdout.splitlines()) == 1


def test_newer_syntax_than_the_interpreter_reads_is_left_to_the_parser():
    # A Python 3.12 f-string (a backslash inside a replacement field) beside a long chain that
    # gets the file measured: Python 3.11's own parser refuses it, libcst reads it.
    fstring = "names = ['a', 'b']\nmessage = f'missing: {\"\\n\\t\".join(names)}'\n"
    text = HOT + fstring + "z = " + "a + " * 900 + "a\n"
    assert looks_risky(text)
    assert nesting_problem(text) is None
    result = check_source(text, "newer.py", Config())
    assert result.problem is None and [f.code for f in result.findings] == ["GPU101"]
