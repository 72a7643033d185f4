"""The `advisor` pre-commit hook, through real `pre-commit try-repo` on a throwaway repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout of torch-advisor")
def test_hook_reports_findings_and_passes_clean_files(tmp_path):
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.skip("pre-commit is not installed")
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "train.py").write_text(
        "for x, y in loader:\n"
        "    loss = model(x)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    total += loss.item()\n"
    )
    (repo / "clean.py").write_text("print('hello')\n")
    # pre-commit names this file too: the hook's --force-exclude must leave it out.
    (repo / "legacy").mkdir()
    (repo / "legacy" / "old_train.py").write_text((repo / "train.py").read_text())
    (repo / "pyproject.toml").write_text('[tool.advisor]\nexclude = ["legacy/"]\n')
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    run = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "advisor", "--all-files"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=900,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "train.py:5:14: GPU101" in output
    assert "clean.py" not in output.split("Failed")[-1]
    assert "old_train.py" not in output

    (repo / "train.py").write_text("print('fixed')\n")
    run = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "advisor", "--all-files"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Passed" in run.stdout
