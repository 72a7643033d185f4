"""The flake8 plugin, run through real flake8: same codes, rows and columns as `--format concise`."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from advisor.cli import main

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "tests" / "corpus").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))


def _plugin_installed() -> bool:
    try:
        eps = metadata.entry_points()
        group = eps.select(group="flake8.extension") if hasattr(eps, "select") else eps.get("flake8.extension", [])
        return any(ep.name == "GPU" for ep in group)
    except Exception:  # noqa: BLE001
        return False


pytestmark = pytest.mark.skipif(
    not _plugin_installed(), reason="torch-advisor is not installed (pip install -e '.[dev]')"
)


def _flake8(paths):
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "GPU", "--isolated", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def _rows(text):
    rows = set()
    for line in text.splitlines():
        path, row, column, rest = line.split(":", 3)
        rows.add((Path(path).name, int(row), int(column), rest.split()[0]))
    return rows


def test_flake8_matches_concise_output(capsys):
    assert FILES
    flake8 = _rows(_flake8(FILES))
    main(["check", "--format", "concise", "--exit-zero", *map(str, FILES)])
    concise = _rows(capsys.readouterr().out)
    assert flake8 == concise
    assert {code for *_, code in concise} >= {"GPU101", "GPU102", "GPU103", "GPU105", "GPU201", "GPU301", "GPU501", "GPU503"}


def test_flake8_honours_noqa(tmp_path):
    path = tmp_path / "t.py"
    path.write_text(
        "for x, y in loader:\n"
        "    loss = model(x)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    a = loss.item()  # noqa: GPU101\n"
        "    out = model(y)\n"
        "    b = out.item()\n"
    )
    assert [line.split(":")[1:3] for line in _flake8([path]).splitlines()] == [["7", "9"]]


def test_flake8_lines_read_as_concise_lines_severity_included(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.advisor]\nshow-info = true\n")
    path = tmp_path / "periodic.py"
    path.write_text(
        "import torch\n"
        "for step, (x, y) in enumerate(loader):\n"
        "    x = x.cuda()\n"
        "    loss = model(x)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    if step % 100 == 0:\n"
        "        print(loss.item())\n"
    )
    flake8 = _flake8([path]).splitlines()
    main(["check", "--format", "concise", "--exit-zero", str(path)])
    concise = capsys.readouterr().out.splitlines()
    assert flake8 == concise
    assert any(" GPU101 [info] " in line for line in flake8)
