"""The documentation site: per-rule pages generated from the rules, fresh, and built by mkdocs
with no broken internal link."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.docsite import pages, stale
from advisor.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent


def test_generated_pages_are_fresh():
    assert stale(ROOT / "docs") == [], "docs/ is stale: run `python -m advisor.docsite generate`"


def test_every_rule_has_a_page_with_every_section():
    generated = pages()
    for rule in ALL_RULES:
        assert (ROOT / "docs" / "rules" / f"{rule.code.lower()}.md").is_file()
        text = generated[f"rules/{rule.code.lower()}.md"]
        for heading in ("## What it finds", "## Why it costs", "## Example", "## Instead", "## Fix safety",
                        "## Measured cost", "## References", "## Silencing it"):
            assert heading in text, (rule.code, heading)


def _build(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(folder / "mkdocs.yml"),
                           "-d", str(folder / "site")], capture_output=True, text=True, timeout=120)


def test_mkdocs_strict_build_has_no_broken_links(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (it is in the dev extra)")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    result = _build(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "rules" / "gpu101" / "index.html").is_file()
    # The check is real: a broken internal link fails the strict build.
    page = tmp_path / "docs" / "rules" / "gpu101.md"
    page.write_text(page.read_text() + "\n[gone](gpu999.md)\n")
    result = _build(tmp_path)
    assert result.returncode != 0 and "gpu999.md" in result.stderr
