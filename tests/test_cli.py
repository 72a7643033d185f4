"""`advisor check | rules | explain` end to end, in process: exit codes, formats, fixes, config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.rule_docs import rules_markdown
from advisor.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent

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


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_file_exits_zero(tmp_path, capsys):
    code, out, _ = run(capsys, "check", write(tmp_path, "ok.py", CLEAN))
    assert code == 0
    assert "All checks passed" in out


def test_findings_exit_one_with_concise_lines(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BAD)
    code, out, _ = run(capsys, "check", "--format", "concise", path)
    assert code == 1
    assert out.splitlines() == [
        f"{path}:4:10: GPU201 DataLoader without `pin_memory=True` while its batches go to the GPU: "
        "each copy is staged through pageable memory and blocks the host",
        f"{path}:10:14: GPU101 `loss.item()` waits for the GPU on every training step",
    ]


def test_text_output_shows_source_span_hint_and_summary(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BAD)
    code, out, _ = run(capsys, "check", path)
    assert code == 1
    assert "    total += loss.item()" in out
    assert "             ^^^^^^^^^^^" in out
    assert "hint: keep the value on the device" in out
    assert "fix: add `pin_memory=True`" in out
    assert "Found 2 findings in 1 file. 1 fixable with `--fix`." in out


def test_json_output_is_shaped_like_ruffs(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BAD)
    code, out, _ = run(capsys, "check", "--format", "json", path)
    assert code == 1
    items = json.loads(out)
    assert [i["code"] for i in items] == ["GPU201", "GPU101"]
    first = items[0]
    assert set(first) >= {"code", "message", "filename", "location", "end_location", "fix", "url", "severity"}
    assert first["location"] == {"row": 4, "column": 10}
    assert first["end_location"] == {"row": 4, "column": 53}
    assert first["severity"] == "warning"
    assert first["url"] is None  # no `docs-url` configured: no link into this repository
    assert first["fix"] == {
        "applicability": "safe",
        "message": "add `pin_memory=True`",
        "edits": [{"content": ", pin_memory=True", "location": {"row": 4, "column": 52},
                   "end_location": {"row": 4, "column": 52}}],
    }
    assert items[1]["fix"] is None


def test_exit_zero_and_quiet(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BAD)
    code, out, _ = run(capsys, "check", "--exit-zero", "--quiet", path)
    assert code == 0
    assert "Found" not in out and "GPU101" in out


def test_select_and_ignore_prefixes(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BAD)
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU2", path)
    assert [line.split()[1] for line in out.splitlines()] == ["GPU201"]
    _, out, _ = run(capsys, "check", "--format", "concise", "--ignore", "GPU201", path)
    assert [line.split()[1] for line in out.splitlines()] == ["GPU101"]
    # The longer prefix wins, as in flake8.
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU101", "--ignore", "GPU1", path)
    assert [line.split()[1] for line in out.splitlines()] == ["GPU101"]


def test_noqa_suppresses_all_or_listed_codes(tmp_path, capsys):
    text = BAD.replace("total += loss.item()", "total += loss.item()  # noqa: GPU101")
    text = text.replace("num_workers=2)", "num_workers=2)  # noqa")
    code, out, _ = run(capsys, "check", "--format", "concise", write(tmp_path, "n.py", text))
    assert code == 0 and out == ""
    other = BAD.replace("total += loss.item()", "total += loss.item()  # noqa: GPU102")
    _, out, _ = run(capsys, "check", "--format", "concise", write(tmp_path, "m.py", other))
    assert "GPU101" in out


def test_info_findings_hidden_unless_asked(tmp_path, capsys):
    text = BAD.replace("    total += loss.item()", "    if step % 10 == 0:\n        total += loss.item()")
    path = write(tmp_path, "g.py", text)
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU101", path)
    assert out == ""
    code, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU101", "--show-info", path)
    assert code == 1 and "GPU101" in out


def test_fix_rewrites_file_and_reports_what_is_left(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BAD)
    os.chmod(path, 0o640)
    code, out, _ = run(capsys, "check", "--fix", path)
    assert code == 1  # GPU101 has no fix and remains
    text = path.read_text()
    assert "DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True)" in text
    # Pinning the loader makes the blocking copy a GPU203 finding, fixed in the next round.
    assert "x = x.cuda(non_blocking=True)" in text
    assert "Found 3 findings (2 fixed, 1 remaining)." in out
    assert "GPU201" not in out.split("Fixed")[0]
    assert (path.stat().st_mode & 0o777) == 0o640
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_fix_keeps_crlf_and_bom(tmp_path, capsys):
    path = tmp_path / "crlf.py"
    path.write_bytes(b"\xef\xbb\xbf" + BAD.replace("\n", "\r\n").encode())
    run(capsys, "check", "--fix", path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"pin_memory=True)\r\n" in data
    assert b"non_blocking=True)\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_diff_prints_without_writing(tmp_path, capsys):
    path = write(tmp_path, "bad.py", BAD)
    code, out, err = run(capsys, "check", "--diff", path)
    assert code == 1
    assert "+loader = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True)" in out
    assert "-loader = DataLoader(ds, batch_size=4, num_workers=2)" in out
    assert path.read_text() == BAD
    assert "Would fix 2 findings in 1 file." in err


def test_syntax_error_is_one_line_and_other_files_still_checked(tmp_path, capsys):
    broken = write(tmp_path, "a_broken.py", "import torch\nfor x in loader:\n    loss.backward()\n    print(loss.item()\n")
    bad = write(tmp_path, "b_bad.py", BAD)
    code, out, err = run(capsys, "check", "--format", "concise", tmp_path)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{broken}:") and "syntax error" in lines[0]
    assert any(line.startswith(f"{bad}:10:14: GPU101") for line in lines)
    assert "Traceback" not in out + err


def test_files_no_rule_can_fire_on_are_not_parsed(tmp_path, capsys):
    # The text pre-filter skips them, so even their syntax errors are left to Python and flake8.
    code, out, _ = run(capsys, "check", "--format", "concise", write(tmp_path, "x.py", "def f(:\n"))
    assert code == 0 and out == ""


def test_undecodable_file_is_reported(tmp_path, capsys):
    path = tmp_path / "latin.py"
    path.write_bytes(b"x = '\xff\xfe'\nimport torch\nloss.backward()\n")
    code, out, err = run(capsys, "check", "--format", "concise", path)
    assert code == 1
    assert out.startswith(f"{path}:1:1: error: cannot decode: line 1")
    assert "Traceback" not in err


def test_pep263_cookie_is_honoured(tmp_path, capsys):
    path = tmp_path / "cookie.py"
    path.write_bytes(("# -*- coding: latin-1 -*-\nname = 'é'\n" + BAD).encode("latin-1"))
    code, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU101", path)
    assert code == 1 and ":12:14: GPU101" in out


def test_missing_path_exits_two_but_checks_the_rest(tmp_path, capsys):
    bad = write(tmp_path, "bad.py", BAD)
    code, out, err = run(capsys, "check", "--format", "concise", tmp_path / "nope.py", bad)
    assert code == 2
    assert "nope.py: no such file or folder" in err
    assert "GPU101" in out


def test_discovery_skips_virtualenvs_build_and_excluded(tmp_path, capsys):
    write(tmp_path, "pkg/train.py", BAD)
    write(tmp_path, "build/lib/train.py", BAD)
    write(tmp_path, "node_modules/x/train.py", BAD)
    write(tmp_path, "env/lib/train.py", BAD)
    write(tmp_path, "env/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "legacy/old.py", BAD)
    write(tmp_path, "pyproject.toml", '[tool.advisor]\nexclude = ["legacy"]\n')
    _, out, _ = run(capsys, "check", "--format", "concise", "--select", "GPU101", tmp_path)
    files = {line.split(":")[0] for line in out.splitlines()}
    assert files == {str(tmp_path / "pkg" / "train.py")}


def test_pyproject_config_select_per_file_ignores_and_show_info(tmp_path, capsys):
    write(tmp_path, "pyproject.toml", textwrap.dedent(
        """\
        [tool.advisor]
        select = ["GPU1"]
        per-file-ignores = { "scripts/*" = ["GPU101"] }
        show-info = true
        """
    ))
    write(tmp_path, "src/train.py", BAD)
    write(tmp_path, "scripts/train.py", BAD)
    _, out, _ = run(capsys, "check", "--format", "concise", tmp_path)
    assert [line.split(":")[0] for line in out.splitlines()] == [str(tmp_path / "src" / "train.py")]
    assert "GPU201" not in out


@pytest.mark.parametrize(
    "body, message",
    [
        ('select = "GPU101"', "`select` must be a list"),
        ("colour = true", "unknown key `colour`"),
        ('show-info = "yes"', "`show-info` must be true or false"),
        ('ignore = ["not a code"]', "not a rule code"),
        ("select = [", "invalid TOML"),
        ('torch-version = "two"', "`torch-version`"),
        ('docs-url = "docs/rules"', "`docs-url` must be an absolute"),
        ("torch-version = 2.4", "`torch-version`"),
    ],
)
def test_bad_config_is_a_clear_error_naming_the_key(tmp_path, capsys, body, message):
    write(tmp_path, "pyproject.toml", f"[tool.advisor]\n{body}\n")
    path = write(tmp_path, "bad.py", BAD)
    code, out, err = run(capsys, "check", path)
    assert code == 2
    assert message in err and "pyproject.toml" in err
    assert "Traceback" not in err


def test_bad_select_option_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(capsys, "check", "--select", "gpu 101", write(tmp_path, "a.py", CLEAN))
    assert code == 2 and "not a rule code" in err


def test_rules_lists_every_rule(capsys):
    code, out, _ = run(capsys, "rules", "--format", "json")
    assert code == 0
    assert [r["code"] for r in json.loads(out)] == [r.code for r in ALL_RULES]


def test_explain_prints_docs_and_rejects_unknown_codes(capsys):
    code, out, _ = run(capsys, "explain", "gpu101")
    assert code == 0
    for heading in ("### What it finds", "### Why it costs", "### Example", "### Instead", "### Fix safety",
                    "### Measured cost", "### References"):
        assert heading in out
    code, _, err = run(capsys, "explain", "GPU999")
    assert code == 2 and "unknown rule" in err


def test_docs_page_is_generated_from_the_rules():
    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown(), (
        "docs/rules.md is stale: run `advisor explain --all > docs/rules.md`"
    )


def test_no_command_is_a_usage_error(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "usage:" in err


def test_python_dash_m_and_help_work():
    out = subprocess.run([sys.executable, "-m", "advisor", "check", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for option in ("--select", "--ignore", "--format", "--fix", "--diff", "--show-info", "--exit-zero", "--quiet"):
        assert option in out.stdout


def test_static_analysis_never_imports_torch(tmp_path):
    path = write(tmp_path, "bad.py", BAD)
    code = (
        "import sys; from advisor.cli import main; rc = main(['check', '-q', %r]);"
        "sys.exit(3 if 'torch' in sys.modules else rc)" % str(path)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 1, out.stderr


def test_readme_rule_table_matches_the_rules():
    readme = (ROOT / "README.md").read_text()
    for r in ALL_RULES:
        row = f"| {r.code} | {r.family} | `{r.name}` | {r.severity.value} | {r.fixable.value} | {r.summary} |"
        assert row in readme, f"README rule table is stale for {r.code}"


HOT_LOOP = "import torch\nfor x in loader:\n    loss = model(x.cuda())\n    loss.backward()\n    y = loss.item()\n    optimizer.step()\n"


@pytest.mark.parametrize(
    "tail, expected",
    [
        ("z = " + "(" * 3000 + "1" + ")" * 3000 + "\n", "syntax error: too many nested parentheses"),
        ("z = (" + "+\n".join(["a"] * 9000) + ")\n", "skipped: too deeply nested to analyse"),
        ("if x:\n" + "".join("    " * i + "if x:\n" for i in range(1, 120)) + "    " * 120 + "pass\n",
         "syntax error: too many levels of indentation"),
    ],
    ids=["brackets", "operator-chain", "blocks"],
)
def test_pathological_nesting_is_one_line_not_a_crash(tmp_path, tail, expected):
    # Run in a child process: the failure this guards against is a segfault of the parser.
    path = write(tmp_path, "deep.py", HOT_LOOP + tail)
    out = subprocess.run([sys.executable, "-m", "advisor", "check", "--format", "concise", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr
    assert expected in out.stdout
    assert "Traceback" not in out.stderr


def test_deep_but_valid_code_is_analysed(tmp_path, capsys):
    # 2,000 implicitly concatenated strings nest 2,000 levels deep in libcst's tree.
    path = write(tmp_path, "strings.py", HOT_LOOP + "z = (" + "\n".join(['"a"'] * 2000) + ")\n")
    code, out, _ = run(capsys, "check", "--format", "concise", path)
    assert code == 1 and ":5:9: GPU101" in out


def test_torch_version_reaches_the_model(tmp_path):
    from advisor.config import ConfigFinder
    from advisor.engine import check_source
    from advisor.model import FileModel
    import libcst as cst

    write(tmp_path, "pyproject.toml", '[tool.advisor]\ntorch-version = "2.1.2"\n')
    config = ConfigFinder().for_path(tmp_path / "x.py")
    assert config.torch_version == (2, 1)
    assert FileModel.build(cst.parse_module("x = 1\n"), torch_version=(1, 13)).torch_version == (1, 13)
    assert check_source("x = 1\n", config=config).problem is None


def test_docs_url_makes_finding_links_absolute(tmp_path, capsys):
    write(tmp_path, "pyproject.toml", '[tool.advisor]\ndocs-url = "https://docs.example.org/rules/{code}.html"\n')
    path = write(tmp_path, "bad.py", BAD)
    code, out, _ = run(capsys, "check", "--format", "json", path)
    assert code == 1
    assert {i["url"] for i in json.loads(out)} == {
        "https://docs.example.org/rules/gpu101.html", "https://docs.example.org/rules/gpu201.html"
    }


def test_is_notebook_follows_the_suffix_as_pathlib_reads_it():
    from advisor.discovery import is_notebook

    assert is_notebook("a.ipynb") and is_notebook("dir/B.IPYNB") and is_notebook(Path("x/a..ipynb"))
    assert not is_notebook(".ipynb") and not is_notebook("dir/.ipynb") and not is_notebook("a.ipynb.py")
