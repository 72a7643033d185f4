"""The per-family examples: `examples/family_<name>.py` shows every rule its docstring lists
(a line `Shows: GPU104, GPU106`), and its corrected twin `family_<name>_fixed.py` shows none."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor.config import Config
from advisor.engine import check_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("family_*.py") if not p.stem.endswith("_fixed"))


def _shown_codes(path: Path):
    match = re.search(r"^Shows:\s*(.+)$", path.read_text(), re.MULTILINE)
    assert match, f"{path.name} needs a 'Shows: GPU...' line in its docstring"
    return set(re.findall(r"GPU\d{3}", match.group(1)))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_family_example_shows_its_rules(path):
    result = check_file(path, Config(show_info=True))
    assert result.problem is None
    assert _shown_codes(path) <= {f.code for f in result.findings}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_family_example_twin_is_clean(path):
    twin = path.with_name(path.stem + "_fixed.py")
    assert twin.exists(), f"{path.name} needs its corrected twin {twin.name}"
    result = check_file(twin, Config(show_info=True))
    assert result.problem is None
    assert [(f.start.row, f.code, f.message) for f in result.findings] == []
