"""Realistic training scripts (tests/corpus, examples/) whose `# expect:` marks must match exactly:
every marked line reported with that code and severity, and nothing anywhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.config import Config
from advisor.engine import check_file
from advisor.rules import ALL_RULES
from tests.expectations import actual_findings, expected_findings

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "tests" / "corpus").glob("*.py"))
# Every rule's findings on the corpus are marked: a new rule that fires there must mark them.
CORPUS_CODES = {rule.code for rule in ALL_RULES}


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_script_findings_match_marks(path):
    result = check_file(path, Config(show_info=True))
    assert result.problem is None
    expected = {e for e in expected_findings(path.read_text()) if e[1] in CORPUS_CODES}
    actual = {a for a in actual_findings(result.findings) if a[1] in CORPUS_CODES}
    assert sorted(actual - expected) == [], "reported but not marked"
    assert sorted(expected - actual) == [], "marked but not reported"


def test_fixed_example_is_clean():
    result = check_file(ROOT / "examples" / "train_fixed.py", Config(show_info=True))
    assert result.problem is None
    assert [(f.start.row, f.code) for f in result.findings] == []


def test_example_reports_every_headline_rule_once():
    # The bundled example stays free of test marks, since users read it; its lines are listed here.
    result = check_file(ROOT / "examples" / "train.py", Config(show_info=True))
    assert sorted((f.start.row, f.code, f.severity.value) for f in result.findings) == [
        (41, "GPU704", "info"),
        (97, "GPU501", "warning"),
        (98, "GPU201", "warning"),
        (98, "GPU204", "warning"),
        (123, "GPU301", "warning"),
        (128, "GPU105", "warning"),
        (130, "GPU101", "warning"),
        (131, "GPU103", "warning"),
        (133, "GPU102", "warning"),
        (143, "GPU503", "warning"),
    ]
