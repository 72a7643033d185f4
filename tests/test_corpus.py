"""Realistic training scripts (tests/corpus, examples/) whose `# expect:` marks must match exactly:
every marked line reported with that code and severity, and nothing anywhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.config import Config
from advisor.engine import check_file
from tests.expectations import actual_findings, expected_findings

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "tests" / "corpus").glob("*.py")) + [ROOT / "examples" / "train.py"]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_script_findings_match_marks(path):
    result = check_file(path, Config(show_info=True))
    assert result.problem is None
    expected = expected_findings(path.read_text())
    actual = actual_findings(result.findings)
    assert sorted(actual - expected) == [], "reported but not marked"
    assert sorted(expected - actual) == [], "marked but not reported"


def test_fixed_example_is_clean():
    result = check_file(ROOT / "examples" / "train_fixed.py", Config(show_info=True))
    assert result.problem is None
    assert [(f.start.row, f.code) for f in result.findings] == []


def test_example_reports_every_headline_rule():
    result = check_file(ROOT / "examples" / "train.py")
    assert {f.code for f in result.findings} == {
        "GPU101", "GPU102", "GPU103", "GPU105", "GPU201", "GPU301", "GPU501", "GPU503"
    }
