"""What a ruff or flake8 user expects of `advisor check` (issue 15), as they meet it: a process
started from a shell, pre-commit or an editor, its exit code, stdout and stderr."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from advisor.rule_codes import META_CODES, RULE_CODES
from advisor.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent

# Two findings: GPU201 (safe fix, row 4) and GPU101 (no fix, row 10).
BAD = textwrap.dedent(
    """\
    import torch
    from torch.utils.data import DataLoader

    loader = DataLoader(ds, batch_size=4, num_workers=2)
    for x, y in loader:
        x = x.cuda()
        loss = model(x).mean()
        loss.backward()
        optimizer.step()
        total += loss.item()
    """
)
CLEAN = "import torch\nx = torch.zeros(3)\n"


def advisor(*args, cwd: Path, stdin: str = None, env: dict = None) -> subprocess.CompletedProcess:
    """`advisor ARGS` in ``cwd``, as a shell runs it. The user's git configuration and global
    excludes never leak in: HOME and XDG_CONFIG_HOME point at an empty folder unless ``env``
    says otherwise."""
    environment = dict(os.environ)
    home = cwd / ".home-for-test"
    home.mkdir(exist_ok=True)
    environment.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "COLUMNS": "200"})
    environment.pop("NO_COLOR", None)
    environment.pop("FORCE_COLOR", None)
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "advisor", *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=environment, timeout=600)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def checked_files(run: subprocess.CompletedProcess) -> list:
    """The files a concise report names, in order."""
    return sorted({line.split(":")[0] for line in run.stdout.splitlines() if line})


# -- 1. unknown selectors ------------------------------------------------------------------------
def test_rule_code_list_matches_the_registry():
    assert RULE_CODES == tuple(rule.code for rule in ALL_RULES), (
        "advisor/rule_codes.py RULE_CODES must list every rule's code (a new rule goes there too)")
    assert not set(META_CODES) & set(RULE_CODES)


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select", "--extend-ignore"])
def test_unknown_selector_on_the_command_line_is_an_error(tmp_path, option):
    write(tmp_path, "train.py", BAD)
    run = advisor("check", option, "FOO", "train.py", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == f"advisor: error: {option}: Unknown rule selector: `FOO`\n"
    assert run.stdout == ""  # no "All checks passed."


@pytest.mark.parametrize("body, key", [
    ('select = ["GPU9"]', "select"),
    ('extend-select = ["GPU1", "GPU77"]', "extend-select"),
    ('ignore = ["FOO"]', "ignore"),
    ('extend-ignore = ["GPU2010"]', "extend-ignore"),
    ('per-file-ignores = { "scripts/*" = ["GPU8"] }', "per-file-ignores.scripts/*"),
])
def test_unknown_selector_in_pyproject_is_an_error_naming_file_and_key(tmp_path, body, key):
    write(tmp_path, "pyproject.toml", f"[tool.advisor]\n{body}\n")
    write(tmp_path, "train.py", BAD)
    run = advisor("check", ".", cwd=tmp_path)
    assert run.returncode == 2
    assert "pyproject.toml [tool.advisor]" in run.stderr and f"`{key}`" in run.stderr
    assert "Unknown rule selector" in run.stderr or "not a rule code" in run.stderr
    assert "All checks passed" not in run.stdout


def test_prefixes_and_the_meta_rule_are_known_selectors(tmp_path):
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "--select", "G,GPU,GPU1,GPU20,GPU001", "--format", "concise", "train.py", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stderr == ""


def test_reserved_code_selected_is_an_error_and_ignored_is_a_warning(tmp_path):
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "--select", "GPU404", "train.py", cwd=tmp_path)
    assert run.returncode == 2 and "`GPU404` is reserved" in run.stderr
    write(tmp_path, "pyproject.toml", '[tool.advisor]\nignore = ["GPU404"]\n')
    run = advisor("check", "--format", "concise", "train.py", cwd=tmp_path)
    assert run.returncode == 1  # the run goes on: GPU201 and GPU101 are reported
    assert len(run.stdout.splitlines()) == 2
    warnings = run.stderr.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("advisor: warning: ")
    assert "`ignore`" in warnings[0] and "GPU404" in warnings[0] and "no effect" in warnings[0]


def test_unknown_code_in_noqa_is_one_warning_and_the_run_goes_on(tmp_path):
    write(tmp_path, "train.py", BAD.replace("total += loss.item()", "total += loss.item()  # noqa: GPU999"))
    for attempt in ("cold", "warm"):  # the second run is answered by the cache: it must warn too
        run = advisor("check", "--format", "concise", "train.py", cwd=tmp_path)
        assert run.returncode == 1, attempt
        assert [line.split(": ")[1].split()[0] for line in run.stdout.splitlines()] == ["GPU201", "GPU101"]
        assert run.stderr == ("advisor: warning: train.py:10:35: `# noqa` lists GPU999, which no rule has; "
                              "it silences nothing\n"), attempt


def test_reserved_code_in_noqa_is_a_warning_even_on_a_clean_file(tmp_path):
    write(tmp_path, "ok.py", "x = 1  # noqa: GPU404, E501\n")
    for attempt in ("cold", "warm"):  # a clean file is answered from the stat index when warm
        run = advisor("check", ".", cwd=tmp_path)
        assert run.returncode == 0, attempt
        assert "All checks passed." in run.stdout
        assert "ok.py:1:" in run.stderr and "GPU404, which is reserved" in run.stderr, attempt


# -- 2. a missing path ---------------------------------------------------------------------------
def test_missing_path_prints_only_the_error(tmp_path):
    run = advisor("check", "missing.py", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == "advisor: error: missing.py: no such file or folder\n"


def test_missing_path_beside_a_clean_file_does_not_claim_all_checks_passed(tmp_path):
    write(tmp_path, "ok.py", CLEAN)
    run = advisor("check", "ok.py", "missing.py", cwd=tmp_path)
    assert run.returncode == 2
    assert "All checks passed" not in run.stdout
    assert "missing.py: no such file or folder" in run.stderr


# -- 3. ignore files and gitignore-style excludes --------------------------------------------------
def _project(tmp_path: Path) -> Path:
    """A git repository (a `.git` folder is all that marks one) with a finding in every file."""
    repo = tmp_path / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    for name in ("src/train.py", "wandb/run-1/files/train.py", "generated/model.py", "notes/a/scratch.py",
                 "notes/a/keep.py", "data/cache.py", "deep/x/generated/g.py"):
        write(repo, name, BAD)
    return repo


def test_gitignore_ignore_and_info_exclude_are_respected_when_walking(tmp_path):
    repo = _project(tmp_path)
    write(repo, ".gitignore", "wandb/\n/generated\n")
    write(repo, "notes/.ignore", "scratch.py\n")
    write(repo, ".git/info/exclude", "data/\n")
    run = advisor("check", "--format", "concise", ".", cwd=repo)
    assert checked_files(run) == ["deep/x/generated/g.py", "notes/a/keep.py", "src/train.py"]
    # Named on the command line, an ignored file is still checked (as ruff does).
    run = advisor("check", "--format", "concise", "wandb/run-1/files/train.py", cwd=repo)
    assert checked_files(run) == ["wandb/run-1/files/train.py"]


def test_a_negated_pattern_in_a_deeper_file_keeps_a_file(tmp_path):
    repo = _project(tmp_path)
    write(repo, ".gitignore", "*.py\n!src/*.py\n")
    write(repo, "notes/.gitignore", "!keep.py\n")
    run = advisor("check", "--format", "concise", ".", cwd=repo)
    assert checked_files(run) == ["notes/a/keep.py", "src/train.py"]


def test_global_excludes_file_from_git_config_and_default_location(tmp_path):
    repo = _project(tmp_path)
    home = tmp_path / "home"
    write(home, ".config/git/ignore", "generated/\n")  # git's default global excludes file
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    run = advisor("check", "--format", "concise", ".", cwd=repo, env=env)
    assert "generated/model.py" not in checked_files(run) and "deep/x/generated/g.py" not in checked_files(run)
    write(home, "my-excludes", "src/\n")
    write(home, ".gitconfig", "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my-excludes\n")
    run = advisor("check", "--format", "concise", ".", cwd=repo, env=env)
    files = checked_files(run)
    assert "src/train.py" not in files and "generated/model.py" in files


def test_gitignore_outside_a_repository_does_not_apply_but_ignore_does(tmp_path):
    folder = tmp_path / "plain"
    write(folder, "a.py", BAD)
    write(folder, "b.py", BAD)
    write(folder, "c.py", BAD)
    write(folder, ".gitignore", "a.py\n")
    write(folder, ".ignore", "b.py\n")
    run = advisor("check", "--format", "concise", ".", cwd=folder)
    assert checked_files(run) == ["a.py", "c.py"]


def test_respect_gitignore_false_turns_ignore_files_off(tmp_path):
    repo = _project(tmp_path)
    write(repo, ".gitignore", "wandb/\ngenerated/\n")
    write(repo, "pyproject.toml", "[tool.advisor]\nrespect-gitignore = false\n")
    run = advisor("check", "--format", "concise", ".", cwd=repo)
    assert "wandb/run-1/files/train.py" in checked_files(run)
    write(repo, "pyproject.toml", '[tool.advisor]\nrespect-gitignore = "no"\n')
    run = advisor("check", ".", cwd=repo)
    assert run.returncode == 2 and "`respect-gitignore` must be true or false" in run.stderr


def test_exclude_patterns_have_gitwildmatch_semantics(tmp_path):
    repo = _project(tmp_path)
    write(repo, "pyproject.toml", textwrap.dedent("""\
        [tool.advisor]
        exclude = ["**/generated/**", "notes/*/"]
        extend-exclude = ["/src/*.py", "!src/keep_me.py"]
        """))
    write(repo, "src/keep_me.py", BAD)
    run = advisor("check", "--format", "concise", ".", cwd=repo)
    # `notes/*/` names folders one level down; `!` keeps a file a wider pattern leaves out.
    assert checked_files(run) == ["data/cache.py", "src/keep_me.py", "wandb/run-1/files/train.py"]
    run = advisor("check", "--format", "concise", "--extend-exclude", "data,wandb", ".", cwd=repo)
    assert checked_files(run) == ["src/keep_me.py"]


def _imports_pathspec(folder: Path, *args: str) -> bool:
    code = ("import sys; from advisor.cli import main; main(['check', '-q', '--format', 'concise', "
            f"{', '.join(repr(a) for a in args)}]); print('pathspec' in sys.modules)")
    home = folder / ".home-for-test"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    run = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, env=env,
                         timeout=600)
    return run.stdout.splitlines()[-1] == "True"


def test_pathspec_is_imported_only_where_a_pattern_applies(tmp_path):
    folder = tmp_path / "plain"
    write(folder, "a.py", CLEAN)
    assert not _imports_pathspec(folder, ".")  # the warm path's imports do not grow
    repo = _project(tmp_path)
    assert not _imports_pathspec(repo, ".")  # a repository with no ignore file
    write(repo, ".gitignore", "wandb/\n")
    assert _imports_pathspec(repo, ".")
    # pathspec's answers are remembered: a warm run over the same walk does not ask it again.
    assert not _imports_pathspec(repo, ".")
    assert _imports_pathspec(repo, "--no-cache", ".")


def test_remembered_verdicts_follow_the_ignore_files_text(tmp_path):
    repo = _project(tmp_path)
    write(repo, ".gitignore", "wandb/\ngenerated/\n")
    first = advisor("check", "--format", "concise", ".", cwd=repo)
    assert "wandb/run-1/files/train.py" not in checked_files(first)
    write(repo, ".gitignore", "generated/\n")
    second = advisor("check", "--format", "concise", ".", cwd=repo)
    assert "wandb/run-1/files/train.py" in checked_files(second)
    assert "generated/model.py" not in checked_files(second)


# -- 4. --force-exclude ----------------------------------------------------------------------------
def test_force_exclude_applies_exclusions_to_named_files(tmp_path):
    repo = _project(tmp_path)
    write(repo, "pyproject.toml", '[tool.advisor]\nexclude = ["generated/"]\n')
    write(repo, ".gitignore", "wandb/\n")
    write(repo, "build/out.py", BAD)
    named = ["src/train.py", "generated/model.py", "wandb/run-1/files/train.py", "build/out.py"]
    run = advisor("check", "--format", "concise", *named, cwd=repo)
    assert checked_files(run) == sorted(named)
    run = advisor("check", "--format", "concise", "--force-exclude", *named, cwd=repo)
    assert checked_files(run) == ["src/train.py"]
    run = advisor("check", "--force-exclude", "generated/model.py", cwd=repo)
    assert run.returncode == 0 and "All checks passed." in run.stdout


def test_pre_commit_hook_passes_force_exclude():
    hook = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "entry: advisor check --force-exclude" in hook


# -- 6. --add-noqa ---------------------------------------------------------------------------------
NOQA_SOURCE = textwrap.dedent(
    '''\
    import torch
    from torch.utils.data import DataLoader

    loader = DataLoader(ds, batch_size=4,  # noqa: E501
                        num_workers=2)
    for x, y in loader:
        x = x.cuda()
        loss = model(x).mean()
        loss.backward()
        optimizer.step()
        total += loss.item() + \\
            1
        print(f"""{loss}
        # a hash in the string""")
        print(loss)  # show progress
    '''
)


def test_add_noqa_silences_every_finding_keeps_the_file_compiling_and_is_idempotent(tmp_path):
    path = write(tmp_path, "train.py", NOQA_SOURCE)
    before = advisor("check", "--format", "concise", "train.py", cwd=tmp_path)
    assert before.returncode == 1 and len(before.stdout.splitlines()) == 4
    run = advisor("check", "--add-noqa", "train.py", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.endswith("Added 4 noqa codes.\n"), run.stderr
    text = path.read_text()
    ast.parse(text)
    lines = text.splitlines()
    assert lines[3] == "loader = DataLoader(ds, batch_size=4,  # noqa: E501, GPU201"  # merged, E501 kept
    assert lines[10].endswith("\\") and lines[11] == "        1  # noqa: GPU101"  # never after a backslash
    assert lines[13] == '    # a hash in the string""")  # noqa: GPU102'  # after the string, not in it
    assert lines[14] == "    print(loss)  # show progress  # noqa: GPU102"
    after = advisor("check", "train.py", cwd=tmp_path)
    assert after.returncode == 0 and "All checks passed." in after.stdout
    again = advisor("check", "--add-noqa", "train.py", cwd=tmp_path)
    assert again.stderr.endswith("Added 0 noqa codes.\n") and path.read_text() == text


def test_add_noqa_in_a_notebook_puts_codes_in_the_cells(tmp_path):
    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["%matplotlib inline\n", "from torch.utils.data import DataLoader\n",
                    "loader = DataLoader(ds, batch_size=4, num_workers=2)"]},
        {"cell_type": "markdown", "metadata": {}, "source": ["notes"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["for x, y in loader:\n", "    x = x.cuda()\n", "    loss = model(x).mean()\n",
                    "    loss.backward()\n", "    optimizer.step()\n", "    total += loss.item()\n"]},
    ]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    path = write(tmp_path, "nb.ipynb", json.dumps(notebook, indent=1))
    run = advisor("check", "--add-noqa", "nb.ipynb", cwd=tmp_path)
    assert run.returncode == 0 and run.stderr.endswith("Added 2 noqa codes.\n"), run.stderr
    written = json.loads(path.read_text())
    assert written["cells"][0]["source"][0] == "%matplotlib inline\n"
    assert written["cells"][0]["source"][2].endswith("num_workers=2)  # noqa: GPU201")
    assert written["cells"][2]["source"][5] == "    total += loss.item()  # noqa: GPU101\n"
    assert advisor("check", "nb.ipynb", cwd=tmp_path).returncode == 0


def test_add_noqa_refuses_to_combine_with_fix(tmp_path):
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "--add-noqa", "--fix", "train.py", cwd=tmp_path)
    assert run.returncode == 2 and "cannot be combined" in run.stderr


# -- 7. unused and unknown noqa codes (GPU001) -------------------------------------------------
UNUSED = textwrap.dedent(
    """\
    import torch
    x = torch.zeros(3)  # noqa: GPU101, E501
    y = x + 1  # noqa: GPU999 because of the old loader
    for a, b in loader:
        loss = model(a)
        loss.backward()
        optimizer.step()
        total += loss.item()  # noqa: GPU101, GPU102
        z = 2  # noqa: GPU001, GPU105
        w = 3  # noqa
    """
)


def test_unused_noqa_is_opt_in_and_reported_with_a_safe_fix(tmp_path):
    path = write(tmp_path, "train.py", UNUSED)
    run = advisor("check", "--format", "concise", "train.py", cwd=tmp_path)
    assert run.returncode == 0  # the whole `GPU` prefix does not select the meta-rule
    run = advisor("check", "--extend-select", "GPU001", "--format", "concise", "train.py", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout.splitlines() == [
        "train.py:2:21: GPU001 unused `# noqa` code: `GPU101` (silences nothing here)",
        "train.py:3:12: GPU001 unused `# noqa` code: `GPU999` (unknown)",
        "train.py:8:27: GPU001 unused `# noqa` code: `GPU102` (silences nothing here)",
    ]
    run = advisor("check", "--extend-select", "GPU001", "--fix", "train.py", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Found 3 findings (3 fixed, 0 remaining)." in run.stdout
    lines = path.read_text().splitlines()
    assert lines[1] == "x = torch.zeros(3)  # noqa: E501"  # other tools' codes stay
    assert lines[2] == "y = x + 1  # because of the old loader"  # the text after it stays a comment
    assert lines[7] == "    total += loss.item()  # noqa: GPU101"
    assert lines[8:] == ["    z = 2  # noqa: GPU001, GPU105", "    w = 3  # noqa"]  # kept on purpose; blanket


def test_unused_noqa_in_pyproject_select(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.advisor]\nextend-select = ["GPU0"]\n')
    write(tmp_path, "train.py", "x = 1  # noqa: GPU2\n")
    run = advisor("check", "--format", "concise", ".", cwd=tmp_path)
    assert run.returncode == 1 and "GPU001" in run.stdout


# -- 8. more configuration -----------------------------------------------------------------------
def test_extend_ignore_and_extend_select_add_to_the_configured_lists(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.advisor]\nselect = ["GPU1"]\nextend-select = ["GPU201"]\n')
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "--format", "concise", "train.py", cwd=tmp_path)
    assert [line.split()[1] for line in run.stdout.splitlines()] == ["GPU201", "GPU101"]
    run = advisor("check", "--format", "concise", "--extend-ignore", "GPU101", "train.py", cwd=tmp_path)
    assert [line.split()[1] for line in run.stdout.splitlines()] == ["GPU201"]
    # --select replaces `select`; the file's extend-select still adds to it.
    run = advisor("check", "--format", "concise", "--select", "GPU5", "train.py", cwd=tmp_path)
    assert [line.split()[1] for line in run.stdout.splitlines()] == ["GPU201"]


def test_config_option_names_the_configuration_file(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.advisor]\nignore = ["GPU101"]\n')
    write(tmp_path, "ci/advisor.toml", '[tool.advisor]\nignore = ["GPU201"]\n')
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "--format", "concise", "--config", "ci/advisor.toml", "train.py", cwd=tmp_path)
    assert [line.split()[1] for line in run.stdout.splitlines()] == ["GPU101"]
    run = advisor("check", "--config", "nowhere.toml", "train.py", cwd=tmp_path)
    assert run.returncode == 2 and "nowhere.toml: no such file" in run.stderr
    write(tmp_path, "empty.toml", "[tool.other]\n")
    run = advisor("check", "--config", "empty.toml", "train.py", cwd=tmp_path)
    assert run.returncode == 2 and "no [tool.advisor] table" in run.stderr


def test_fix_only_exit_non_zero_on_fix_and_show_fixes(tmp_path):
    path = write(tmp_path, "train.py", BAD)
    run = advisor("check", "--fix-only", "train.py", cwd=tmp_path)
    assert run.returncode == 0  # GPU101 remains but is not reported
    assert run.stdout == "Fixed 2 findings.\n"  # pin_memory, then the copy that can now overlap
    assert "pin_memory=True" in path.read_text()
    path.write_text(BAD)
    run = advisor("check", "--fix-only", "--exit-non-zero-on-fix", "train.py", cwd=tmp_path)
    assert run.returncode == 1
    run = advisor("check", "--fix-only", "--exit-non-zero-on-fix", "train.py", cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == "No fixes applied.\n"  # nothing left to fix
    path.write_text(BAD.replace("        total += loss.item()\n", ""))
    run = advisor("check", "--fix", "--exit-non-zero-on-fix", "--show-fixes", "train.py", cwd=tmp_path)
    assert run.returncode == 1  # no finding remains, but the file changed
    assert ("Fixed 2 findings:\n- train.py:\n      1 × GPU201 (dataloader-without-pin-memory)\n"
            "      1 × GPU203 (blocking-copy-from-pinned-loader)\n") in run.stdout


def test_output_format_is_an_alias_of_format(tmp_path):
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "--output-format", "json", "train.py", cwd=tmp_path)
    assert [entry["code"] for entry in json.loads(run.stdout)] == ["GPU201", "GPU101"]


ESCAPE = "\x1b["


@pytest.mark.parametrize("args, env, coloured", [
    ([], {}, False),  # piped
    (["--color", "always"], {}, True),
    ([], {"FORCE_COLOR": "1"}, True),
    ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
    (["--color", "always"], {"NO_COLOR": "1"}, True),
    (["--color", "never"], {"FORCE_COLOR": "1"}, False),
    ([], {"NO_COLOR": ""}, False),  # an empty NO_COLOR does not count; still piped
])
def test_color_option_and_environment_conventions(tmp_path, args, env, coloured):
    write(tmp_path, "train.py", BAD)
    run = advisor("check", *args, "train.py", cwd=tmp_path, env=env)
    assert (ESCAPE in run.stdout) == coloured
    assert "GPU101" in run.stdout


def test_statistics_on_request_only(tmp_path):
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "train.py", cwd=tmp_path)
    assert "dataloader-without-pin-memory" not in run.stdout  # no count table by default
    run = advisor("check", "--statistics", "train.py", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout.splitlines() == [
        "    1  GPU101      item-in-training-loop",
        "    1  GPU201  [*] dataloader-without-pin-memory",
        "Found 2 findings in 1 file. 1 fixable with `--fix`.",
    ]
    run = advisor("check", "--statistics", "--format", "json", "train.py", cwd=tmp_path)
    assert json.loads(run.stdout) == [
        {"code": "GPU101", "name": "item-in-training-loop", "count": 1, "fixable": False},
        {"code": "GPU201", "name": "dataloader-without-pin-memory", "count": 1, "fixable": True},
    ]


def test_help_names_the_new_options():
    run = subprocess.run([sys.executable, "-m", "advisor", "check", "--help"], capture_output=True, text=True,
                         env=dict(os.environ, COLUMNS="200"), timeout=600)
    for option in ("--extend-select", "--extend-ignore", "--extend-exclude", "--force-exclude", "--config",
                   "--output-format", "--color", "--fix-only", "--exit-non-zero-on-fix", "--show-fixes",
                   "--add-noqa", "--stdin-filename", "--statistics"):
        assert option in run.stdout, option


# -- 9. standard input ---------------------------------------------------------------------------
def test_stdin_takes_configuration_and_name_from_stdin_filename(tmp_path):
    write(tmp_path, "scripts/pyproject.toml", '[tool.advisor]\nignore = ["GPU101"]\n')
    run = advisor("check", "--format", "concise", "--stdin-filename", "scripts/train.py", "-", cwd=tmp_path,
                  stdin=BAD)
    assert run.returncode == 1
    # GPU101 is ignored by scripts/pyproject.toml: only GPU201 (row 4) is left.
    assert [line.split(":")[:2] for line in run.stdout.splitlines()] == [["scripts/train.py", "4"]]
    run = advisor("check", "--format", "concise", "-", cwd=tmp_path, stdin=BAD)
    assert [line.split(":")[0] for line in run.stdout.splitlines()] == ["-", "-"]


def test_stdin_with_fix_prints_the_fixed_source(tmp_path):
    run = advisor("check", "--fix", "--stdin-filename", "train.py", cwd=tmp_path, stdin=BAD)
    assert run.returncode == 1  # GPU101 remains
    assert run.stdout == BAD.replace("num_workers=2)", "num_workers=2, pin_memory=True)").replace(
        "x.cuda()", "x.cuda(non_blocking=True)")
    assert "train.py:10:14: GPU101" in run.stderr and "(2 fixed, 1 remaining)" in run.stderr


def test_stdin_respects_force_exclude(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.advisor]\nexclude = ["generated/"]\n')
    run = advisor("check", "--force-exclude", "--stdin-filename", "generated/x.py", "-", cwd=tmp_path, stdin=BAD)
    assert run.returncode == 0 and run.stdout == ""
    run = advisor("check", "--force-exclude", "--fix", "--stdin-filename", "generated/x.py", cwd=tmp_path, stdin=BAD)
    assert run.returncode == 0 and run.stdout == BAD  # an editor's buffer comes back unchanged


# -- 10. the report after --fix ------------------------------------------------------------------
def test_report_after_fix_shows_the_fixed_text_and_ruffs_summary(tmp_path):
    # The set_epoch fix adds a line above the remaining finding: its row and code line must be
    # those of the fixed file.
    source = (ROOT / "examples" / "train.py").read_text()
    path = write(tmp_path, "train.py", source)
    run = advisor("check", "--fix", "train.py", cwd=tmp_path)
    assert run.returncode == 1
    fixed_lines = path.read_text().splitlines()
    shown = [line for line in run.stdout.splitlines() if " │ " in line and "^" not in line]
    assert shown
    for line in shown:
        gutter, _, code = line.partition(" │ ")
        row = int(gutter.strip())
        assert fixed_lines[row - 1].expandtabs(1) == code.split("  ← ")[0], line
    assert "Found 9 findings (3 fixed, 6 remaining)." in run.stdout


# -- 11. a closed pipe ---------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["check", "--format", "json", "train.py"],
    ["check", "--diff", "train.py"],
    ["check", "train.py"],
    ["check", "--format", "concise", "train.py"],
    ["rules"],
    ["explain", "--all"],
])
def test_a_closed_pipe_ends_the_output_quietly(tmp_path, args):
    write(tmp_path, "train.py", (ROOT / "examples" / "train.py").read_text())
    # The reading end is closed before the first byte is written: every write fails, as it
    # does once `head -1` has its line. No timing involved.
    proc = subprocess.Popen([sys.executable, "-m", "advisor", *args], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait(timeout=600)
    assert err == "" or "Would fix" in err, err
    assert "Traceback" not in err and "cannot write the report" not in err
    assert code == (0 if args[0] in ("rules", "explain") else 1)


# -- 12. concise output shows severity -----------------------------------------------------------
def test_concise_output_marks_info_findings(tmp_path):
    # Under a periodic condition GPU101 drops to info.
    write(tmp_path, "cpu.py", "import torch\nfor step, (x, y) in enumerate(loader):\n    x = x.cuda()\n"
                              "    loss = model(x)\n    loss.backward()\n    optimizer.step()\n"
                              "    if step % 100 == 0:\n        print(loss.item())\n")
    run = advisor("check", "--format", "concise", "--show-info", "cpu.py", cwd=tmp_path)
    assert run.stdout.startswith("cpu.py:8:15: GPU101 [info] `loss.item()`")
    write(tmp_path, "train.py", BAD)
    run = advisor("check", "--format", "concise", "train.py", cwd=tmp_path)
    assert run.stdout.splitlines()[1].startswith("train.py:10:14: GPU101 `loss.item()`")  # warnings as before
    run = advisor("check", "--format", "github", "--show-info", "cpu.py", cwd=tmp_path)
    assert run.stdout.startswith("::notice file=cpu.py,line=8")


def test_the_meta_rule_is_documented_where_rules_are(tmp_path):
    run = advisor("explain", "GPU001", cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("## GPU001 `unused-noqa` (meta-rule)")
    assert "--extend-select GPU001" in run.stdout
    run = advisor("rules", cwd=tmp_path)
    assert "GPU001 unused-noqa is a meta-rule" in run.stdout
