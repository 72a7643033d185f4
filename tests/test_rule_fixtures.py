"""Every rule's fixture (tests/rules/<family>/<CODE>.py) runs as tests, section by section:
look-alikes stay silent, true cases report exactly their marked lines, and each fixable case
matches its snapshot in <CODE>.fixed.py, parses, and leaves no fixable finding behind."""

from __future__ import annotations

import libcst as cst
import pytest

from advisor.rules import ALL_RULES
from tests.expectations import actual_findings, expected_findings
from tests.rule_fixtures import FIXTURES, check, fixed_source, sections, snapshot_path, snapshots

SECTIONS = [
    pytest.param(rule, section, id=f"{rule.code}-{section.kind}-{i}-{section.note}")
    for rule in ALL_RULES
    for i, section in enumerate(sections(rule))
]
VALID = [p for p in SECTIONS if p.values[1].kind == "valid"]
INVALID = [p for p in SECTIONS if p.values[1].kind == "invalid"]


def test_every_fixture_belongs_to_a_rule():
    expected = {f"{r.family}/{r.code}.py" for r in ALL_RULES} | {
        f"{r.family}/{r.code}.fixed.py" for r in ALL_RULES if snapshot_path(r).is_file()
    }
    found = {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*.py")}
    assert found == expected


@pytest.mark.parametrize("rule, section", VALID)
def test_look_alike_is_silent(rule, section):
    assert not expected_findings(section.source), f"a valid section carries `# expect:` (line {section.row})"
    result = check(rule, section.source)
    assert result.problem is None
    assert [(f.start.row, f.code, f.message) for f in result.findings] == []


@pytest.mark.parametrize("rule, section", INVALID)
def test_true_case_reports_its_marked_lines(rule, section):
    expected = expected_findings(section.source, rule.code)
    assert expected, f"an invalid section must mark a line with `# expect:` (line {section.row})"
    result = check(rule, section.source)
    assert result.problem is None
    assert actual_findings(result.findings, rule.code) == expected


@pytest.mark.parametrize("rule, section", INVALID)
def test_fix_matches_snapshot_and_leaves_nothing_fixable(rule, section):
    fixed = fixed_source(rule, section)
    assert fixed == snapshots(rule).get(section.key), (
        f"{snapshot_path(rule).name} is stale for the section at line {section.row}: "
        f"run `python -m tests.rule_fixtures {rule.code}` and review the diff"
    )
    if fixed is None:
        return
    cst.parse_module(fixed)
    again = check(rule, fixed)
    assert again.problem is None
    assert [f for f in again.findings if f.fix is not None] == []
    assert len(again.findings) <= len(check(rule, section.source).findings)


def test_snapshots_name_only_existing_sections():
    for rule in ALL_RULES:
        keys = {s.key for s in sections(rule) if s.kind == "invalid"}
        assert set(snapshots(rule)) <= keys, rule.code


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_has_five_true_cases_and_five_traps(rule):
    found = sections(rule)
    true_cases = sum(len(expected_findings(s.source, rule.code)) for s in found if s.kind == "invalid")
    assert true_cases >= 5
    assert sum(s.kind == "valid" for s in found) >= 5
