"""Multi-file projects (tests/corpus/projects/<name>/): a training script split across modules.
Every file's `# expect:` marks must match exactly, whether the project is checked as a whole or
one file at a time (as pre-commit and flake8 hand files over), and whatever the order."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.config import Config
from advisor.engine import check_file
from advisor.project.view import forget_views
from tests.expectations import actual_findings, expected_findings

ROOT = Path(__file__).resolve().parent / "corpus" / "projects"
PROJECTS = sorted(p for p in ROOT.iterdir() if p.is_dir())
SHOW_ALL = Config(show_info=True)


def _findings(path: Path):
    result = check_file(path, SHOW_ALL)
    assert result.problem is None
    return actual_findings(result.findings)


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_project_findings_match_marks(project):
    forget_views()
    for path in sorted(project.rglob("*.py")):
        expected = expected_findings(path.read_text())
        assert sorted(_findings(path) ^ expected) == [], path.name


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_each_file_alone_gives_the_same_findings(project):
    files = sorted(project.rglob("*.py"))
    together = {}
    forget_views()
    for path in reversed(files):
        together[path] = _findings(path)
    for path in files:
        forget_views()
        assert _findings(path) == together[path], path.name
