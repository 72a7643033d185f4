"""Rule documentation: every rule documents each section, its `fixable` kind matches what its
fixes really are, one renderer serves every face, reserved codes are explained, and
`advisor rules` fits the terminal and prints plain text when piped."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlparse

import pytest

from advisor.findings import Applicability, Fixable
from advisor.retired_codes import RETIRED_CODES
from advisor.rule_docs import explain_markdown, rule_markdown, rule_page, rules_markdown, rules_text
from advisor.rules import ALL_RULES
from tests.rule_fixtures import check, sections

ROOT = Path(__file__).resolve().parent.parent
RULES = pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)


def advisor(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True, text=True, cwd=cwd,
                          env=environ, timeout=120)


@RULES
def test_every_rule_documents_every_section(rule):
    for field in ("summary", "what", "why", "example", "instead", "hint", "fix_safety"):
        assert textwrap.dedent(getattr(rule, field, "")).strip(), f"{rule.code} has no `{field}`"
    assert isinstance(rule.fixable, Fixable)
    assert rule.references, f"{rule.code} cites no documentation"
    for title, url in rule.references:
        parsed = urlparse(url)
        assert title.strip() and parsed.scheme == "https" and parsed.netloc and " " not in url, (rule.code, url)


@RULES
def test_fixable_says_what_the_fixes_on_the_fixture_are(rule):
    """The enum is checked against the fixes the rule really offers on its true cases."""
    offered = []
    for section in sections(rule):
        if section.kind == "invalid":
            offered += [f.fix.applicability if f.fix else None for f in check(rule, section.source).findings]
    kinds = set(offered) - {None}
    assert kinds == set(rule.fixable.applicabilities), (rule.code, rule.fixable, kinds)
    if rule.fixable.always:
        assert None not in offered, f"{rule.code} says every finding has a fix"


def test_gpu401_fix_is_unsafe_everywhere():
    """Optimizers skip None gradients but step zero ones: `set_to_none=True` is never safe."""
    gpu401 = next(r for r in ALL_RULES if r.code == "GPU401")
    assert gpu401.fixable is Fixable.SOMETIMES_UNSAFE
    assert Applicability.SAFE not in gpu401.fixable.applicabilities


def test_fix_kind_reads_the_same_on_every_face():
    listed = {row["code"]: row["fix"] for row in json.loads(advisor("rules", "--format", "json").stdout)}
    from advisor.output.sarif import sarif_log

    sarif = {r["id"]: r["properties"]["fix"] for r in sarif_log([], [])["runs"][0]["tool"]["driver"]["rules"]}
    table = rules_markdown()
    for rule in ALL_RULES:
        assert listed[rule.code] == sarif[rule.code] == rule.fixable.value
        assert f"| {rule.severity.value} | {rule.fixable.value} | {rule.summary} |" in table
        assert f"- **Fix:** {rule.fixable.value} (" in rule_page(rule)


@RULES
def test_one_renderer_gives_the_same_sections_everywhere(rule):
    explained = rule_markdown(rule, anchor=False)
    page = rule_page(rule)
    for section in ("What it finds", "Why it costs", "Example", "Instead", "Fix safety", "Measured cost",
                    "References"):
        assert f"### {section}" in explained and f"## {section}" in page
    for _, url in rule.references:
        assert f"]({url})" in explained and f"]({url})" in page


def test_reserved_gpu404_is_explained_not_unknown():
    result = advisor("explain", "GPU404")
    assert result.returncode == 0, result.stderr
    assert "GPU404 (reserved)" in result.stdout and "never" in result.stdout.lower()
    unknown = advisor("explain", "GPU999")
    assert unknown.returncode == 2 and "unknown rule" in unknown.stderr
    assert "GPU404 is reserved" in advisor("rules").stdout
    assert "GPU404 | reserved | memory |" in rules_markdown()
    assert "reserved" in explain_markdown("gpu404")


def test_no_rule_holds_a_retired_or_reserved_code():
    assert not set(RETIRED_CODES) & {r.code for r in ALL_RULES}


_ANSI = re.compile(r"\x1b\[")
_BOX = re.compile("[\u2500-\u257f]")


def test_rules_piped_is_plain_text_within_80_columns():
    result = advisor("rules")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert not _ANSI.search(result.stdout) and not _BOX.search(result.stdout)
    assert max(len(line) for line in lines) <= 80
    assert all(line == line.rstrip() for line in lines)
    for rule in ALL_RULES:
        assert any(line.startswith(f"{rule.code} {rule.name} ") for line in lines)


def test_rules_follow_columns_and_use_a_table_when_it_fits():
    wide = advisor("rules", COLUMNS="200").stdout.splitlines()
    assert wide[0].split() == ["Code", "Family", "Name", "Severity", "Fix", "Summary"]
    assert max(len(line) for line in wide) <= 200
    assert any(line.startswith("GPU101  sync ") for line in wide)
    narrow = advisor("rules", COLUMNS="60").stdout.splitlines()
    assert max(len(line) for line in narrow) <= 60


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_rules_fit_the_terminal_width():
    import fcntl
    import pty
    import struct
    import termios

    main, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    process = subprocess.Popen([sys.executable, "-m", "advisor", "rules"], stdout=follower, stderr=follower,
                               env=environ, cwd=ROOT)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closes when the process ends
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(timeout=120) == 0
    os.close(main)
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    lines = [line for line in text.splitlines() if line]
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("GPU101 item-in-training-loop") for line in lines)


def test_rules_text_layout_never_exceeds_the_width():
    for width in (40, 80, 127, 128, 160, 300):
        assert max(len(line) for line in rules_text(ALL_RULES, width).splitlines()) <= max(width, 20)


def test_rules_json_url_is_absolute_with_docs_url_and_null_without(tmp_path):
    plain = json.loads(advisor("rules", "--format", "json", cwd=tmp_path).stdout)
    assert {row["url"] for row in plain} == {None}
    (tmp_path / "pyproject.toml").write_text('[tool.advisor]\ndocs-url = "https://docs.example.org/rules/{code}"\n')
    linked = json.loads(advisor("rules", "--format", "json", cwd=tmp_path).stdout)
    assert linked[0]["url"] == f"https://docs.example.org/rules/{ALL_RULES[0].code.lower()}"


def test_check_json_url_is_null_without_docs_url(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\nfor x, y in loader:\n    loss = model(x.cuda())\n    loss.backward()\n"
                      "    optimizer.step()\n    print(loss.item())\n")
    result = advisor("check", "--no-cache", "--format", "json", str(script), cwd=tmp_path)
    items = json.loads(result.stdout)
    assert items and all(item["url"] is None for item in items)
    sarif = json.loads(advisor("check", "--no-cache", "--format", "sarif", str(script), cwd=tmp_path).stdout)
    assert all("helpUri" not in rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"])
    assert "docs/rules/" not in json.dumps(sarif)


def test_hover_explains_a_reserved_code():
    pytest.importorskip("pygls")
    from advisor.lsp.docs import rule_markdown as hover

    assert "reserved" in hover("GPU404") and hover("GPU999") is None
    assert hover("GPU101").startswith("## GPU101")
