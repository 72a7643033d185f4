"""Every rule's VALID and INVALID examples (kept beside the rule, as Fixit does) run as tests."""

from __future__ import annotations

import libcst as cst
import pytest

from advisor.config import Config
from advisor.engine import check_source
from advisor.fixes import apply_fixes
from advisor.rules import ALL_RULES
from tests.expectations import actual_findings, expected_findings

SHOW_ALL = Config(show_info=True)

VALID = [
    pytest.param(rule, case, id=f"{rule.code}-valid-{i}-{case.note or 'case'}")
    for rule in ALL_RULES
    for i, case in enumerate(rule.VALID)
]
INVALID = [
    pytest.param(rule, case, id=f"{rule.code}-invalid-{i}-{case.note or 'case'}")
    for rule in ALL_RULES
    for i, case in enumerate(rule.INVALID)
]


@pytest.mark.parametrize("rule, case", VALID)
def test_valid_example_has_no_finding(rule, case):
    result = check_source(case.source, "case.py", SHOW_ALL, rules=[rule])
    assert result.problem is None
    assert [(f.start.row, f.code, f.message) for f in result.findings] == []


@pytest.mark.parametrize("rule, case", INVALID)
def test_invalid_example_reports_marked_lines(rule, case):
    source = case.source
    expected = expected_findings(source, rule.code)
    assert expected, "an INVALID case must mark at least one line with `# expect:`"
    result = check_source(source, "case.py", SHOW_ALL, rules=[rule])
    assert result.problem is None
    assert actual_findings(result.findings, rule.code) == expected


@pytest.mark.parametrize("rule, case", [p for p in INVALID if p.values[1].fixed is not None])
def test_fix_gives_expected_code_that_no_longer_triggers(rule, case):
    result = check_source(case.source, "case.py", SHOW_ALL, rules=[rule])
    fixed, applied = apply_fixes(case.source, result.findings, unsafe=True)
    assert applied
    assert fixed == case.fixed_source
    cst.parse_module(fixed)
    again = check_source(fixed, "case.py", SHOW_ALL, rules=[rule])
    assert [f for f in again.findings if f.code == rule.code] == []


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_has_five_true_cases_and_five_traps(rule):
    true_cases = sum(len(expected_findings(c.source, rule.code)) for c in rule.INVALID)
    assert true_cases >= 5
    assert len(rule.VALID) >= 5
