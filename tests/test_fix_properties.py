"""Properties every fix must keep, checked on each fixable rule's invalid fixture sections, on variants
of them (inside a function, CRLF, tabs, stray comments) and on the bundled examples:

- applying one fix gives code that parses, and that finding is gone;
- the changed lines lie within the rows the fix's edits name;
- a second `--fix` over the fixed file changes nothing.
"""

from __future__ import annotations

import difflib
import os
import random
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.config import Config
from advisor.engine import check_source
from advisor.findings import Fixable
from advisor.fixes import apply_fixes, fix_until_stable
from advisor.rules import ALL_RULES
from tests.rule_fixtures import sections, snapshots

ROOT = Path(__file__).resolve().parent.parent
SHOW_ALL = Config(show_info=True)
FIXABLE = [rule for rule in ALL_RULES if rule.fixable is not Fixable.NO]
CASES = [(rule, s.source) for rule in FIXABLE for s in sections(rule) if s.kind == "invalid"]
WITH_FIXES = {s.source for rule in FIXABLE for s in sections(rule) if s.key in snapshots(rule)}
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
BUDGET = int(os.environ.get("ADVISOR_FUZZ_CASES", "300"))


def _inside_function(text: str) -> str:
    return "def main():\n" + "".join("    " + line if line.strip() else line for line in text.splitlines(True))


def _tabs(text: str) -> str:
    out = []
    for line in text.splitlines(True):
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        out.append("\t" * depth + " " * ((len(line) - len(stripped)) % 4) + stripped)
    return "".join(out)


def _comments(text: str, rng: random.Random) -> str:
    lines = text.splitlines(True)
    for _ in range(rng.randrange(1, 4)):
        lines.insert(rng.randrange(len(lines) + 1), "# a note\n")
    return "".join(lines)


def _variant(text: str, choices, rng: random.Random) -> str:
    if "function" in choices:
        text = _inside_function(text)
    if "tabs" in choices:
        text = _tabs(text)
    if "comments" in choices:
        text = _comments(text, rng)
    if "crlf" in choices:
        text = text.replace("\n", "\r\n")
    return text


def _changed_old_rows(old: str, new: str):
    rows = set()
    matcher = difflib.SequenceMatcher(a=old.splitlines(True), b=new.splitlines(True), autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        rows.update(range(i1 + 1, max(i1 + 1, i2) + 1))
    return rows


def check_fix_properties(text: str, rules) -> int:
    """Checks every fix in ``text``; returns how many fixes were checked."""
    try:
        cst.parse_module(text)
    except Exception:  # noqa: BLE001 - a variant that does not parse has nothing to fix
        return 0
    result = check_source(text, "case.py", SHOW_ALL, rules=rules)
    assert result.problem is None
    checked = 0
    for finding in result.findings:
        if finding.fix is None:
            continue
        fixed, applied = apply_fixes(text, [finding], unsafe=True)
        assert applied == 1, f"{finding.code} fix did not apply"
        cst.parse_module(fixed)
        after = check_source(fixed, "case.py", SHOW_ALL, rules=rules)
        same = [f for f in after.findings if f.code == finding.code]
        before = [f for f in result.findings if f.code == finding.code]
        assert len(same) < len(before), f"{finding.code} still reported after its fix"
        rows = [e.start.row for e in finding.fix.edits] + [e.end.row for e in finding.fix.edits]
        changed = _changed_old_rows(text, fixed)
        assert changed <= set(range(min(rows), max(rows) + 2)), (finding.code, changed, rows)
        checked += 1
    once, _, _ = fix_until_stable(text, lambda t: check_source(t, "case.py", SHOW_ALL, rules=rules), unsafe=True)
    twice, count, _ = fix_until_stable(once, lambda t: check_source(t, "case.py", SHOW_ALL, rules=rules), unsafe=True)
    assert count == 0 and twice == once, "a second --fix changed the file again"
    return checked


@pytest.mark.parametrize("rule, source", CASES, ids=[f"{r.code}-{i}" for i, (r, _) in enumerate(CASES)])
def test_fix_properties_on_rule_examples(rule, source):
    checked = check_fix_properties(source, [rule])
    if source in WITH_FIXES:
        assert checked >= 1, "the example shows a fixed version, so a fix must have been checked"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_fix_properties_on_bundled_examples(path):
    check_fix_properties(path.read_text(), ALL_RULES)


@settings(max_examples=max(40, BUDGET // 3), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    st.sampled_from(CASES) if CASES else st.nothing(),
    st.sets(st.sampled_from(["function", "tabs", "comments", "crlf"])),
    st.randoms(use_true_random=False),
)
def test_fix_properties_on_variants(case, choices, rng):
    rule, source = case
    check_fix_properties(_variant(source, choices, rng), [rule])
