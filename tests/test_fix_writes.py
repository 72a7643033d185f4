"""`advisor check --fix` never damages what it writes: protected files, links, owners, encodings,
line endings and a notebook's JSON layout, run as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import advisor

# Three safe fixes, one of which adds a line (set_epoch), and two findings that stay: GPU204
# (an unsafe fix) and GPU101 (no fix).
TRAIN = (
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "from torch.utils.data.distributed import DistributedSampler\n"
    "\n"
    "sampler = DistributedSampler(ds)\n"
    "loader = DataLoader(ds, batch_size=4, sampler=sampler, num_workers=2)\n"
    "for epoch in range(10):\n"
    "    for x, y in loader:\n"
    "        x = x.cuda()\n"
    "        loss = model(x).mean()\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        total += loss.item()\n"
)
FIXED = (
    TRAIN.replace("num_workers=2)", "num_workers=2, pin_memory=True)")
    .replace("    for x, y", "    sampler.set_epoch(epoch)\n    for x, y")
    .replace("x.cuda()", "x.cuda(non_blocking=True)")
)


def advisor_run(*args, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, **kwargs)


def lines_about(text: str, name: str):
    return [line for line in text.splitlines() if name in line]


def notebook(loop_as_list: bool = True) -> dict:
    setup, loop = TRAIN.split("for epoch")
    loop = "for epoch" + loop
    return {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Tr\u00e4ning \u2014 caf\u00e9\n", "notes"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
             "source": setup.splitlines(keepends=True)[:-1] + ["# \u00fcber\n", setup.splitlines()[-1]]},
            {"cell_type": "code", "execution_count": 2, "metadata": {"tags": ["train"]},
             "outputs": [{"name": "stdout", "output_type": "stream", "text": ["\u00e9t\u00e9 \u2713\n"]}],
             "source": loop.splitlines(keepends=True) if loop_as_list else loop},
            {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [], "source": "print('\u00e9')\n"},
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def fixed_notebook(nb: dict) -> dict:
    fixed = json.loads(json.dumps(nb))
    for cell in fixed["cells"][1:3]:
        source = cell["source"]
        text = "".join(source) if isinstance(source, list) else source
        text = (text.replace("num_workers=2)", "num_workers=2, pin_memory=True)")
                .replace("    for x, y", "    sampler.set_epoch(epoch)\n    for x, y")
                .replace("x.cuda()", "x.cuda(non_blocking=True)"))
        cell["source"] = text.splitlines(keepends=True) if isinstance(source, list) else text
    return fixed


def jupyter(nb: dict) -> bytes:
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode()


# -- notebooks keep their JSON layout ---------------------------------------------------------------
LAYOUTS = {
    "jupyter.ipynb": lambda nb: jupyter(nb),
    "tabs.ipynb": lambda nb: json.dumps(nb, indent="\t", ensure_ascii=False).encode(),  # no final newline
    "crlf.ipynb": lambda nb: (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").replace("\n", "\r\n").encode(),
    "escaped.ipynb": lambda nb: (json.dumps(nb, indent=2) + "\n").encode(),  # ensure_ascii: \u escapes
    "one_line.ipynb": lambda nb: json.dumps(nb).encode(),
    "bom.ipynb": lambda nb: b"\xef\xbb\xbf" + jupyter(nb),
}


def test_notebook_fix_changes_only_the_fixed_cells_in_the_files_own_layout(tmp_path):
    originals = {}
    for name, dump in LAYOUTS.items():
        for suffix, as_list in (("", True), ("_str", False)):
            path = tmp_path / name.replace(".ipynb", f"{suffix}.ipynb")
            originals[path] = (dump, notebook(as_list))
            path.write_bytes(dump(notebook(as_list)))

    run = advisor_run("check", "--fix", "--format", "concise", *sorted(p.name for p in originals), cwd=tmp_path)

    assert run.returncode == 1 and f"Fixed {3 * len(originals)} findings." in run.stderr, run.stderr
    for path, (dump, nb) in originals.items():
        # Written as its writer would write the fixed notebook: same indentation, escapes, line
        # ends, final newline, key order; the markdown, output and untouched cells byte for byte.
        assert path.read_bytes() == dump(fixed_notebook(nb)), path.name


def test_notebook_fix_keeps_the_text_of_a_hand_edited_file_outside_the_fixed_lines(tmp_path):
    # Escaped and raw non-ASCII side by side, odd spacing, keys out of Jupyter's order.
    raw = (
        '{ "nbformat": 4, "nbformat_minor": 5,\n'
        '  "metadata": {"kernelspec": {"language": "python", "name": "python3"}},\n'
        '  "cells": [\n'
        '    {"source" : [ "# \\u00e9t\\u00e9\\n", "import torch\\n" ,\n'
        '                  "from torch.utils.data import DataLoader\\n",\n'
        '                  "loader = DataLoader(ds, batch_size=4, num_workers=2)" ],\n'
        '     "cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null},\n'
        '    {"cell_type": "markdown", "metadata": {}, "source": "caf\u00e9 \\u2014 r\\u00e9sum\\u00e9"},\n'
        '    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,\n'
        '     "source": ["for x, y in loader:\\n", "\\tx = x.cuda()\\n", "\\tloss = model(x).mean()\\n",\n'
        '                "\\tloss.backward()\\n", "\\toptimizer.step()\\n", "\\ttotal += loss.item()"]}\n'
        '  ]\n'
        '}'
    )
    path = tmp_path / "hand.ipynb"
    path.write_text(raw, encoding="utf-8")
    run = advisor_run("check", "--fix", "--format", "concise", "hand.ipynb", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    expected = raw.replace("num_workers=2)", "num_workers=2, pin_memory=True)")
    assert path.read_text(encoding="utf-8") == expected.replace("x.cuda()", "x.cuda(non_blocking=True)")


# -- one analysis per file ------------------------------------------------------------------------
COUNTING = """
import sys
import advisor.engine as engine

analysed = []
real = engine.check_source


def counted(text, *args, **kwargs):
    analysed.append(text)
    return real(text, *args, **kwargs)


engine.check_source = counted
from advisor.cli import main

status = main(sys.argv[1:])
sys.stderr.write(f"analyses: {len(analysed)}, distinct texts: {len(set(analysed))}\\n")
sys.exit(status)
"""


def test_fix_analyses_each_text_once(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "nb.ipynb").write_bytes(jupyter(notebook()))
    run = subprocess.run([sys.executable, "-c", COUNTING, "check", "--fix", "--jobs", "1", "--no-cache", "train.py",
                          "nb.ipynb"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert (tmp_path / "train.py").read_text() == FIXED
    # Per file: the original, after the first round of fixes, after the second; each once.
    assert run.stderr.strip().splitlines()[-1] == "analyses: 6, distinct texts: 6"


def test_fix_reports_the_findings_of_the_fixed_file(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "nothing_to_fix.py").write_text(  # GPU101 only, which has no fix
        "import torch\nmodel.cuda()\nfor x, y in loader:\n    loss = model(x)\n    loss.backward()\n"
        "    optimizer.step()\n    total += loss.item()\n")
    before = advisor_run("check", "--format", "concise", "nothing_to_fix.py", cwd=tmp_path)
    fixed = advisor_run("check", "--fix", "--format", "concise", "train.py", "nothing_to_fix.py", cwd=tmp_path)
    after = advisor_run("check", "--format", "concise", "train.py", "nothing_to_fix.py", cwd=tmp_path)
    assert fixed.stdout == after.stdout
    assert lines_about(fixed.stdout, "nothing_to_fix.py") == before.stdout.splitlines() != []
    # The text report shows the fixed file's lines under its findings (one line was added).
    (tmp_path / "train.py").write_text(TRAIN)
    text = advisor_run("check", "--fix", "train.py", cwd=tmp_path)
    assert "train.py:14:18: GPU101" in text.stdout and "14 │         total += loss.item()" in text.stdout
    assert "6 │ loader = DataLoader(ds, batch_size=4, sampler=sampler, num_workers=2, pin_memory=True)" in text.stdout
